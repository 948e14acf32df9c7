// Audit: the operators' audit log, filtered by actor, target, action and board, a page at a time;
// the accounts it names by their addresses.
import { useState } from 'preact/hooks';
import { client } from '../api.js';
import { ErrorNote } from '../ui/kit.js';
import { auditCells, Rows, useLoad, Pager } from './shared.js';

export function AuditSection() {
  const [form, setForm] = useState({ actor: '', target: '', action: '', projectId: '' });
  const [filter, setFilter] = useState<Partial<typeof form>>({});
  const [cursor, setCursor] = useState<string | null>(null);
  const query = { limit: 100, ...filter, ...(cursor && { cursor }) };
  const page = useLoad(JSON.stringify(query), () => client.get('/api/admin/audit', { params: { query } }));
  const field = (k: keyof typeof form, placeholder: string) => (
    <input
      name={k}
      aria-label={k}
      class="grow"
      value={form[k]}
      placeholder={placeholder}
      onInput={(e) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value })}
    />
  );
  const rows = (page.data?.rows ?? []).map((r) => ({ ...r, reason: r.data.reason ?? null }));
  return (
    <section class="panel">
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          setCursor(null);
          setFilter(Object.fromEntries(Object.entries(form).flatMap(([k, v]) => (v.trim() ? [[k, v.trim()]] : []))));
        }}
      >
        {field('actor', 'actor (user:…)')}
        {field('target', 'target (account:…)')}
        {field('action', 'action (admin.*)')}
        {field('projectId', 'board id')}
        <button type="submit" class="primary">
          Filter
        </button>
      </form>
      <ErrorNote error={page.error} />
      <Rows
        rows={rows}
        empty="No rows."
        columns={['at', 'actor', 'action', 'target', 'projectId', 'reason', 'data']}
        show={auditCells(page.data?.accounts)}
      />
      <Pager cursor={cursor} next={page.data?.nextCursor ?? null} go={setCursor} />
    </section>
  );
}
