// Overview, Abuse, Audit and Feedback: read-mostly sections over the operators' routes.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote } from '../ui/kit.js';
import { Facts, Guarded, Rows, useLoad } from './shared.js';

type Json = Record<string, unknown>;
const rowsOf = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

export function OverviewSection() {
  const utilization = useLoad<{ nodes?: Json[] } & Json>('/api/admin/utilization');
  const durability = useLoad<Json>('/api/admin/durability');
  const metrics = useLoad<{ days?: Json[] } & Json>('/api/admin/metrics?days=14');
  return (
    <div class="grid2">
      <section class="panel">
        <h2>Nodes</h2>
        <ErrorNote error={utilization.error} />
        {utilization.data
          ? rowsOf(utilization.data.nodes).map((n) => (
              <div key={String(n.nodeId)} class="node">
                <h3>
                  {String(n.nodeId)} {n.self ? '(this node)' : ''}
                </h3>
                <Facts value={n.figures ?? n} />
              </div>
            ))
          : null}
      </section>
      <section class="panel">
        <h2>Durability</h2>
        <ErrorNote error={durability.error} />
        {durability.data ? <Facts value={durability.data} /> : null}
      </section>
      <section class="panel wide">
        <h2>Last 14 days</h2>
        <ErrorNote error={metrics.error} />
        {metrics.data ? <Rows rows={rowsOf(metrics.data.days)} empty="No figures yet." /> : null}
      </section>
    </div>
  );
}

export function AbuseSection() {
  const abuse = useLoad<Json>('/api/admin/abuse?limit=20');
  const allow = useLoad<{ entries: Json[] }>('/api/admin/allowlist?limit=200');
  const [value, setValue] = useState('');
  return (
    <div class="grid2">
      <section class="panel">
        <h2>Last hour, ranked</h2>
        <ErrorNote error={abuse.error} />
        {abuse.data
          ? Object.entries(abuse.data)
              .filter(([, v]) => Array.isArray(v))
              .map(([k, v]) => (
                <div key={k}>
                  <h3>{k}</h3>
                  <Rows rows={rowsOf(v)} empty="Nothing." />
                </div>
              ))
          : null}
      </section>
      <section class="panel">
        <h2>Allowlist</h2>
        <ErrorNote error={allow.error} />
        <div class="row">
          <input name="value" aria-label="Address, CIDR range or email domain" class="grow" value={value} placeholder="203.0.113.7, 10.0.0.0/8 or example.com" onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
          <Guarded label="Add" danger={false} effect={<>{value || 'The value'} draws on no per-address budget (sign-up, sign-in, recovery, device flow).</>} run={(reason) => api('POST', '/api/admin/allowlist', { value: value.trim(), reason })} done={() => (setValue(''), allow.reload())} />
        </div>
        {allow.data ? (
          <table class="list dense">
            <tbody>
              {allow.data.entries.map((e) => (
                <tr key={String(e.id)}>
                  <td>{String(e.value)}</td>
                  <td>{String(e.kind)}</td>
                  <td class="muted">{String(e.reason)}</td>
                  <td>
                    <Guarded label="Remove" effect={<>{String(e.value)} draws on the per-address budgets again.</>} run={(reason) => api('DELETE', '/api/admin/allowlist', { value: e.value, reason })} done={allow.reload} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
    </div>
  );
}

export function AuditSection() {
  const [form, setForm] = useState({ actor: '', target: '', action: '', projectId: '' });
  const [query, setQuery] = useState('');
  const [cursor, setCursor] = useState<string | null>(null);
  const page = useLoad<{ rows?: Json[]; items?: Json[]; nextCursor: string | null } & Json>(`/api/admin/audit?limit=100${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  const field = (k: keyof typeof form, placeholder: string) => (
    <input name={k} aria-label={k} class="grow" value={form[k]} placeholder={placeholder} onInput={(e) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value })} />
  );
  const rows = (page.data ? rowsOf(Object.values(page.data).find(Array.isArray)) : []).map((r) => ({ ...r, reason: (r.data as { reason?: unknown } | undefined)?.reason ?? null }));
  return (
    <section class="panel">
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          setCursor(null);
          setQuery(
            Object.entries(form)
              .filter(([, v]) => v.trim())
              .map(([k, v]) => `&${k}=${encodeURIComponent(v.trim())}`)
              .join(''),
          );
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
      <Rows rows={rows} empty="No rows." columns={['at', 'actor', 'action', 'target', 'projectId', 'reason', 'data']} />
      <div class="row pager">
        {cursor ? (
          <button type="button" onClick={() => setCursor(null)}>
            Newest
          </button>
        ) : null}
        {page.data?.nextCursor ? (
          <button type="button" onClick={() => setCursor(page.data!.nextCursor)}>
            Older
          </button>
        ) : null}
      </div>
    </section>
  );
}

export function FeedbackSection() {
  return (
    <section class="panel">
      <h2>Feedback</h2>
      <p class="muted">Nothing here yet: feedback arrives with doctrine/feedback.</p>
    </section>
  );
}
