// Abuse: what the operators' abuse signals rank (sign-up bursts, refusals, shout floods, socket
// closures), and the allowlist that exempts an address or a domain from the per-address budgets.
import { useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client } from '../api.js';
import { ago, ErrorNote } from '../ui/kit.js';
import { Guarded, Principal, useLoad } from './shared.js';

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
                        <Principal value={r.key} accounts={a?.accounts} />
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
