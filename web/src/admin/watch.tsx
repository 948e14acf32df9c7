// Overview, Abuse and Audit: read-mostly sections over the operators' routes.
import { useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client } from '../api.js';
import { ago, ErrorNote } from '../ui/kit.js';
import { Facts, Guarded, Rows, useLoad, Pager } from './shared.js';

type Json = Record<string, unknown>;
const rowsOf = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

const withoutAlerts = ({ alerts: _alerts, ...rest }: Json): Json => rest;

export function OverviewSection() {
  const utilization = useLoad('utilization', () => client.get('/api/admin/utilization'));
  const durability = useLoad('durability', () => client.get('/api/admin/durability'));
  const metrics = useLoad('metrics', () => client.get('/api/admin/metrics', { params: { query: { days: 14 } } }));
  const alerts = (durability.data?.alerts ?? null) as
    { level: 'critical' | 'warning'; code: string; message: string }[] | null;
  return (
    <div class="grid2">
      <section class="panel wide" aria-label="Alerts">
        <h2>Alerts</h2>
        {alerts === null ? null : alerts.length ? (
          <ul class="alerts">
            {alerts.map((a) => (
              <li key={a.code + a.message} class={`alert ${a.level}`}>
                <strong>{a.level}</strong> {a.message} <code class="muted">{a.code}</code>
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">Nothing needs you now: the store answers, commits land, the bus is up, mail flows.</p>
        )}
      </section>
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
        {durability.data ? <Facts value={withoutAlerts(durability.data)} /> : null}
      </section>
      <section class="panel wide">
        <h2>Last 14 days</h2>
        <ErrorNote error={metrics.error} />
        {metrics.data ? <Rows rows={rowsOf(metrics.data.days)} empty="No figures yet." /> : null}
      </section>
    </div>
  );
}

type RankedRow = Reply<'/api/admin/abuse', 'get'>['signupBursts'][number];

export function AbuseSection() {
  const abuse = useLoad('abuse', () => client.get('/api/admin/abuse', { params: { query: { limit: 20 } } }));
  const allow = useLoad('allowlist', () => client.get('/api/admin/allowlist', { params: { query: { limit: 200 } } }));
  const [value, setValue] = useState('');
  const a = abuse.data;
  // What each list ranks, by what, and whether its counts split by kind (the refusals, by HTTP status).
  const signals: [string, string, RankedRow[], boolean][] = a
    ? [
        ['Refused requests, by address', 'refused', a.refusals.addresses, true],
        ['Refused requests, by principal', 'refused', a.refusals.principals, true],
        ['Sign-ups, by address', 'sign-ups', a.signupBursts, false],
        ['Anonymous boards made, by address', 'boards', a.anonymousBoardBursts, false],
        ['Shouts posted, by principal', 'shouts', a.shoutFloods, false],
        ['Sockets closed over budget, by principal', 'closed', a.socketBudgetClosures, false],
      ]
    : [];
  const quiet = signals.filter(([, , rows]) => !rows.length).map(([title]) => title.toLowerCase());
  return (
    <div class="grid2">
      <section class="panel abuse">
        <h2>Last hour, ranked</h2>
        <ErrorNote error={abuse.error} />
        {a ? (
          <p class="muted small">
            {a.window.from.slice(11, 16)} to {a.window.to.slice(11, 16)} UTC
            {a.partial ? ' · partial: too many rows to read them all' : ''}
          </p>
        ) : null}
        {signals
          .filter(([, , rows]) => rows.length)
          .map(([title, unit, rows, split]) => (
            <div key={title}>
              <h3>{title}</h3>
              <table class="list dense ranked">
                <thead>
                  <tr>
                    <th>{title.endsWith('address') ? 'address' : 'principal'}</th>
                    <th class="num">{unit}</th>
                    {split ? <th>by status</th> : null}
                  </tr>
                </thead>
                <tbody>
                  {rows.map((r) => (
                    <tr key={r.key}>
                      <td>
                        <Who value={r.key} />
                      </td>
                      <td class="num">{r.count.toLocaleString('en')}</td>
                      {split ? (
                        <td class="muted">
                          {Object.entries(r.detail)
                            .map(([status, n]) => `${status} × ${n.toLocaleString('en')}`)
                            .join(' · ')}
                        </td>
                      ) : null}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ))}
        {a && quiet.length ? <p class="muted small">Nothing in the last hour: {quiet.join('; ')}.</p> : null}
      </section>
      <section class="panel">
        <h2>Allowlist</h2>
        <p class="muted small">
          Addresses, ranges and email domains that draw on no per-address budget (sign-up, sign-in, recovery, device
          flow).
        </p>
        <ErrorNote error={allow.error} />
        <div class="row">
          <input
            name="value"
            aria-label="Address, CIDR range or email domain"
            class="grow"
            value={value}
            placeholder="203.0.113.7, 10.0.0.0/8 or example.com"
            onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          />
          <Guarded
            label="Add"
            danger={false}
            effect={
              <>
                {value.trim() || 'The value'} draws on no per-address budget (sign-up, sign-in, recovery, device flow),
                on every node within 10 s.
              </>
            }
            run={(reason) => client.post('/api/admin/allowlist', { body: { value: value.trim(), reason } })}
            done={() => (setValue(''), allow.reload())}
          />
        </div>
        {!allow.data ? null : allow.data.entries.length ? (
          <table class="list dense allowlist">
            <thead>
              <tr>
                <th>value</th>
                <th>kind</th>
                <th>reason</th>
                <th>added</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {allow.data.entries.map((e) => (
                <tr key={e.id}>
                  <td>
                    <code>{e.value}</code>
                  </td>
                  <td>{e.kind}</td>
                  <td class="reason" title={e.reason}>
                    {e.reason}
                  </td>
                  <td title={`${e.at} by ${e.addedBy}`}>{ago(e.at)}</td>
                  <td>
                    <Guarded
                      label="Remove"
                      effect={<>{e.value} draws on the per-address budgets again, on every node within 10 s.</>}
                      run={(reason) => client.delete('/api/admin/allowlist', { body: { value: e.value, reason } })}
                      done={allow.reload}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p class="muted">No entries: every address draws on the budgets.</p>
        )}
      </section>
    </div>
  );
}

/** A ranked key: an account's principal links to its page; addresses and agents as they are. */
function Who({ value }: { value: string }) {
  const user = /^user:(.+)$/.exec(value)?.[1];
  return user ? <a href={`/admin/users/${encodeURIComponent(user)}`}>{value}</a> : <code>{value}</code>;
}

/** Who acted: an account an operator acted as (an impersonation session) names both. */
const actorOf = (r: { actor: string; data: Record<string, unknown> }): string =>
  typeof r.data.impersonatedBy === 'string' ? `operator user:${r.data.impersonatedBy} as account ${r.actor}` : r.actor;

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
  const rows = (page.data?.rows ?? []).map((r) => ({ ...r, actor: actorOf(r), reason: r.data.reason ?? null }));
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
      <Rows rows={rows} empty="No rows." columns={['at', 'actor', 'action', 'target', 'projectId', 'reason', 'data']} />
      <Pager cursor={cursor} next={page.data?.nextCursor ?? null} go={setCursor} />
    </section>
  );
}
