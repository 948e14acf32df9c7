// Money: boards in dunning, one account's billing with the operator's actions on each board it
// owns (re-read the subscription, a complimentary plan, a refund), and the provider's webhooks
// with replay. Every action goes through a confirm step that says what it does and asks why.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client } from '../api.js';
import { navigate } from '../router.js';
import { ago, ErrorNote } from '../ui/kit.js';
import { cell, Guarded, useLoad } from './shared.js';

type AccountBilling = Reply<'/api/admin/billing/{userId}', 'get'>;
type ProviderEvent = Reply<'/api/admin/webhooks', 'get'>['events'][number];

export function MoneySection({ userId }: { userId: string | null }) {
  const [who, setWho] = useState(userId ?? '');
  // Dunning and the webhooks are shown beside an account too: an action there or a move between
  // accounts asks them again, so a board just settled does not linger as overdue.
  const [acted, setActed] = useState(0);
  const fresh = `${userId}:${acted}`;
  useEffect(() => setWho(userId ?? ''), [userId]);
  return (
    <div class="stack">
      <form
        class="row search"
        onSubmit={(e) => (e.preventDefault(), who.trim() && navigate(`/admin/money/${encodeURIComponent(who.trim())}`))}
      >
        <input
          name="userId"
          aria-label="Account id"
          class="grow"
          value={who}
          placeholder="account id (from Users)"
          onInput={(e) => setWho((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary">
          Show billing
        </button>
      </form>
      {userId ? <AccountMoney key={userId} userId={userId} acted={() => setActed((n) => n + 1)} /> : null}
      <Dunning fresh={fresh} />
      <Webhooks fresh={fresh} />
    </div>
  );
}

/** Calls `reload` when `signal` changes, not on the first render (the load itself runs then). */
function useReloadOn(signal: string, reload: () => void): void {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else reload();
  }, [signal]);
}

function Dunning({ fresh }: { fresh: string }) {
  const dunning = useLoad('dunning', () =>
    client.get('/api/admin/billing/dunning', { params: { query: { limit: 100 } } }),
  );
  useReloadOn(fresh, dunning.reload);
  return (
    <section class="panel">
      <h2>Dunning</h2>
      <ErrorNote error={dunning.error} />
      {!dunning.data ? null : dunning.data.boards.length ? (
        <table class="list dense">
          <thead>
            <tr>
              <th>board</th>
              <th>status</th>
              <th class="num">days overdue</th>
              <th>interval</th>
              <th>period ends</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {dunning.data.boards.map((b) => (
              <tr key={b.projectId}>
                <td>
                  {b.name ?? '—'} <code class="muted">{b.projectId}</code>
                </td>
                <td>
                  <span class="pill deleted">{b.status}</span>
                </td>
                <td class="num">{cell(b.daysOverdue)}</td>
                <td>{cell(b.interval)}</td>
                <td>{day(b.currentPeriodEnd)}</td>
                <td>{b.ownerId ? <a href={`/admin/money/${b.ownerId}`}>owner’s billing</a> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">No board is past due.</p>
      )}
    </section>
  );
}

function AccountMoney({ userId, acted }: { userId: string; acted: () => void }) {
  const billing = useLoad(userId, () => client.get('/api/admin/billing/{userId}', { params: { path: { userId } } }));
  const [note, setNote] = useState<string | null>(null);
  if (billing.error) return <ErrorNote error={billing.error} />;
  const d = billing.data;
  if (!d) return <p class="muted">Loading…</p>;
  const after = (text: string) => () => (setNote(text), billing.reload(), acted());
  return (
    <section class="stack" aria-label="Account billing">
      <header class="user-head">
        <h1>
          <a href={`/admin/users/${d.account.id}`}>{d.account.email}</a>
        </h1>
        <div class="row muted">
          <code>{d.account.id}</code>
          {d.account.deletedAt ? <span class="pill deleted">deleted {ago(d.account.deletedAt)}</span> : null}
          <span>
            {d.boards.length} board{d.boards.length === 1 ? '' : 's'} owned or paid for
          </span>
        </div>
      </header>
      {note ? (
        <div class="note ok" role="status">
          {note}
        </div>
      ) : null}
      {d.boards.length ? null : <p class="muted">This account owns and pays for no board.</p>}
      {d.boards.map((b) => (
        <BoardMoney key={b.projectId} userId={d.account.id} board={b} after={after} />
      ))}
    </section>
  );
}

function BoardMoney({
  userId,
  board: b,
  after,
}: {
  userId: string;
  board: AccountBilling['boards'][number];
  after: (text: string) => () => void;
}) {
  const [until, setUntil] = useState(inDays(30));
  const [amount, setAmount] = useState('');
  const owned = b.ownerId === userId;
  const cents = amount.trim() ? Math.round(Number(amount) * 100) : null;
  const s = b.billing;
  return (
    <section class="panel" aria-label={`Board ${b.name ?? b.projectId}`}>
      <h2>
        {b.name ?? '—'} <code class="muted">{b.projectId}</code>
      </h2>
      <div class="row muted">
        <span>
          plan <strong>{b.plan ?? '—'}</strong> (billing says {b.billingPlan})
        </span>
        {b.complimentary ? <span class="pill active">complimentary Pro until {day(b.complimentary.until)}</span> : null}
        {owned ? null : <span>paid for by this account, owned by another</span>}
      </div>
      {s ? (
        <dl class="facts dense">
          {(
            [
              ['subscription', s.subscriptionId ?? 'none'],
              ['status', s.status ?? '—'],
              ['interval', s.interval ?? '—'],
              ['period ends', day(s.currentPeriodEnd)],
              ['cancels at period end', s.cancelAtPeriodEnd ? 'yes' : 'no'],
              ['overdue since', day(s.overdueSince)],
              ['customer', s.customerId],
            ] as const
          ).map(([k, v]) => (
            <div class="row" key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
      ) : (
        <p class="muted">No billing record: the board never went to checkout.</p>
      )}
      {owned ? (
        <div class="actions money-actions">
          {s?.subscriptionId ? (
            <Guarded
              label="Re-read subscription"
              danger={false}
              effect={
                <>
                  Asks the provider for {s.subscriptionId} and settles the board’s billing record and plan from its
                  answer, as a subscription event would. Nothing changes if the provider cannot be reached.
                </>
              }
              run={(reason) =>
                client.post('/api/admin/users/{userId}/subscription', {
                  params: { path: { userId } },
                  body: { projectId: b.projectId, reason },
                })
              }
              done={after(`Re-read the subscription of ${b.name ?? b.projectId}.`)}
            />
          ) : null}
          <span class="row">
            <label class="field inline">
              <span>Pro until</span>
              <input
                type="date"
                name="until"
                value={until}
                min={inDays(1)}
                max={inDays(366)}
                onInput={(e) => setUntil((e.target as HTMLInputElement).value)}
              />
            </label>
            <Guarded
              label="Grant complimentary Pro"
              danger={false}
              effect={
                <>
                  {b.name ?? b.projectId} is on Pro until {until} (end of day, UTC)
                  {b.complimentary ? `, replacing the grant until ${day(b.complimentary.until)}` : ''}; then its plan is
                  what billing says ({b.billingPlan}).
                </>
              }
              run={(reason) =>
                client.post('/api/admin/plan', {
                  body: { projectId: b.projectId, plan: 'pro', until: `${until}T23:59:59Z`, reason },
                })
              }
              done={after(`Complimentary Pro for ${b.name ?? b.projectId} until ${until}.`)}
            />
          </span>
          {s?.subscriptionId ? (
            <span class="row">
              <label class="field inline">
                <span>Amount</span>
                <input
                  name="amount"
                  inputMode="decimal"
                  value={amount}
                  placeholder="all"
                  size={8}
                  onInput={(e) => setAmount((e.target as HTMLInputElement).value)}
                />
              </label>
              <Guarded
                label="Refund"
                effect={
                  cents !== null && !(cents >= 1) ? (
                    <>The amount must be a positive sum, such as 12.50.</>
                  ) : (
                    <>
                      Refunds {cents === null ? 'the whole of' : `${(cents / 100).toFixed(2)} of`} the latest paid
                      invoice of {s.subscriptionId} through the provider. The subscription itself is left as it is.
                    </>
                  )
                }
                run={(reason) =>
                  client.post('/api/admin/users/{userId}/refund', {
                    params: { path: { userId } },
                    body: { projectId: b.projectId, reason, ...(cents !== null && { amount: cents }) },
                  })
                }
                done={(r) => after(`Refunded: ${refundText(r)}.`)()}
              />
            </span>
          ) : null}
        </div>
      ) : null}
      {b.events.length ? (
        <>
          <h3>Provider events</h3>
          <EventRows events={b.events} board={false} />
        </>
      ) : null}
    </section>
  );
}

function Webhooks({ fresh }: { fresh: string }) {
  const webhooks = useLoad('webhooks', () => client.get('/api/admin/webhooks', { params: { query: { limit: 50 } } }));
  useReloadOn(fresh, webhooks.reload);
  return (
    <section class="panel">
      <h2>Webhooks received</h2>
      <ErrorNote error={webhooks.error} />
      {!webhooks.data ? null : webhooks.data.events.length ? (
        <EventRows events={webhooks.data.events} replay={webhooks.reload} />
      ) : (
        <p class="muted">No provider event received yet.</p>
      )}
    </section>
  );
}

function EventRows({
  events,
  replay,
  board = true,
}: {
  events: ProviderEvent[];
  replay?: () => void;
  board?: boolean;
}) {
  return (
    <table class="list dense">
      <thead>
        <tr>
          <th>received</th>
          <th>type</th>
          <th>outcome</th>
          {board ? <th>board</th> : null}
          <th>event</th>
          {replay ? <th /> : null}
        </tr>
      </thead>
      <tbody>
        {events.map((w) => (
          <tr key={`${w.eventId}:${w.at}`}>
            <td title={w.at}>{ago(w.at)}</td>
            <td>{w.type}</td>
            <td>
              <span class={`pill ${w.outcome === 'failed' ? 'deleted' : w.outcome === 'applied' ? 'active' : ''}`}>
                {w.outcome}
              </span>
              {w.replay ? <span class="muted"> · replay</span> : null}
            </td>
            {board ? (
              <td>
                <code>{w.projectId ?? '—'}</code>
              </td>
            ) : null}
            <td>
              <code>{w.eventId}</code>
            </td>
            {replay ? (
              <td>
                <Guarded
                  label="Replay"
                  danger={false}
                  effect={
                    <>
                      Fetches {w.eventId} again from the provider and applies it as a delivery would; an event applied
                      before changes nothing.
                    </>
                  }
                  run={(reason) =>
                    client.post('/api/admin/webhooks/{eventId}/replay', {
                      params: { path: { eventId: w.eventId } },
                      body: { reason },
                    })
                  }
                  done={replay}
                />
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const day = (iso: string | null): string => (iso ? iso.slice(0, 10) : '—');
const inDays = (n: number): string => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const refundText = (r: unknown): string => {
  const refund = (r as { refund?: { amount: number; currency: string; status: string } }).refund;
  return refund ? `${(refund.amount / 100).toFixed(2)} ${refund.currency.toUpperCase()}, ${refund.status}` : 'done';
};
