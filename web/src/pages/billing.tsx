// The account's Billing section: per board you own (named), its plan and subscription, what Pro
// costs, when a past-due board turns Free, upgrade to Pro monthly or yearly (the provider's hosted
// checkout), manage it in the provider's portal, switch a monthly subscription to yearly, and the
// provider deliveries recorded for the board.
import { useEffect, useState } from 'preact/hooks';
import { client } from '../api.js';
import { queryParam } from '../router.js';
import { ago, BoardPicker, ConfirmButton, ErrorNote, useAction } from '../ui/kit.js';
import type { ProjectSummary } from '../types.js';
import { allProjects, useLoad } from '../ui/load.js';

const CHECKOUT_NOTE: Record<string, string> = {
  success:
    'Payment received by the provider: the board turns Pro as soon as its confirmation arrives (usually within seconds).',
  cancelled: 'Checkout was cancelled; nothing changed.',
};

export function BillingSection() {
  const projects = useLoad(allProjects);
  const mine = (projects.data ?? []).filter((p: ProjectSummary) => p.owned);
  const [projectId, setProjectId] = useState<string | null>(null);
  useEffect(() => {
    if (!projectId && mine[0]) setProjectId(mine[0].projectId);
  }, [projects.data]);
  const checkout = queryParam('checkout');
  return (
    <section class="panel form" aria-labelledby="billing">
      <h2 id="billing">Billing</h2>
      {checkout && CHECKOUT_NOTE[checkout] ? (
        <div class="note ok" role="status">
          {CHECKOUT_NOTE[checkout]}
        </div>
      ) : null}
      <ErrorNote error={projects.error} />
      {projects.data && mine.length === 0 ? <p class="muted">You own no board: billing is the owner’s.</p> : null}
      <BoardPicker name="billing-board" boards={mine} value={projectId} onChange={setProjectId} />
      {projectId ? (
        <BoardBilling
          projectId={projectId}
          name={mine.find((p) => p.projectId === projectId)?.name ?? null}
          key={projectId}
        />
      ) : null}
    </section>
  );
}

/** US dollars as a price reads: "$12", "$9.50". */
const usd = (n: number): string =>
  n.toLocaleString('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: Number.isInteger(n) ? 0 : 2,
  });

/** A moment to the minute, in the reader's zone, its exact time kept in the element. */
const When = ({ iso }: { iso: string }) => (
  <time dateTime={iso}>{new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}</time>
);

function BoardBilling({ projectId, name }: { projectId: string; name: string | null }) {
  const params = { query: { projectId } };
  const state = useLoad(() => client.get('/api/account/billing', { params }));
  const deliveries = useLoad(() => client.get('/api/account/billing/events', { params }).then((r) => r.events));
  /** To the provider's hosted checkout or portal. */
  const go = useAction(async (open: () => Promise<{ url: string }>) => {
    const res = await open();
    location.assign(res.url);
    return 'Opening the payment provider…';
  });
  const annual = useAction(async () => {
    const res = await client.post('/api/account/billing/annual', { params });
    state.reload();
    return res.changed ? 'Switched to yearly billing (prorated).' : 'Already billed yearly.';
  });
  const b = state.data;
  if (!b) return <ErrorNote error={state.error} />;
  const sub = b.subscription;
  const live = sub !== null && ['active', 'trialing', 'past_due'].includes(sub.status);
  const priced = b.upgradeOptions.filter((o) => o.priceUsd !== null);
  return (
    <>
      <dl class="facts">
        <div class="row">
          <dt class="muted">Board</dt>
          <dd>
            <a href={`/boards/${projectId}`}>{name ?? projectId}</a>
          </dd>
        </div>
        <div class="row">
          <dt class="muted">Plan</dt>
          <dd>
            <strong>{b.plan === 'pro' ? 'Pro' : 'Free'}</strong>
          </dd>
        </div>
        <div class="row">
          <dt class="muted">Subscription</dt>
          <dd>
            {sub
              ? `${sub.status}${sub.interval ? `, billed ${sub.interval === 'year' ? 'yearly' : 'monthly'}` : ''}`
              : 'none'}
          </dd>
        </div>
        {sub?.graceEndsAt ? (
          <div class="row">
            <dt class="muted">Turns Free on</dt>
            <dd>
              <When iso={sub.graceEndsAt} />
            </dd>
          </div>
        ) : null}
        {priced.length ? (
          <div class="row">
            <dt class="muted">Pro costs</dt>
            <dd>
              {priced.map((o) => `${usd(o.priceUsd!)} a ${o.interval === 'year' ? 'year' : 'month'}`).join(', or ')}
            </dd>
          </div>
        ) : null}
        {sub?.currentPeriodEnd ? (
          <div class="row">
            <dt class="muted">{sub.cancelAtPeriodEnd ? 'Ends on' : 'Renews on'}</dt>
            <dd>{new Date(sub.currentPeriodEnd).toLocaleDateString()}</dd>
          </div>
        ) : null}
      </dl>
      {sub?.graceEndsAt ? (
        <div class="note warn" role="status">
          <span>
            The last payment failed and the provider is retrying it. {name ? `“${name}”` : 'This board'} stays Pro until{' '}
            <When iso={sub.graceEndsAt} />, then turns Free unless a payment goes through: update the card in the
            portal.
          </span>
        </div>
      ) : null}
      {!b.providerAvailable ? (
        <p class="muted">Billing is not configured on this deployment; every board works on the Free plan.</p>
      ) : null}
      {b.providerAvailable ? (
        <div class="row">
          {!live
            ? b.upgradeOptions.map((o) => (
                <button
                  key={o.interval}
                  type="button"
                  class="primary"
                  disabled={go.pending}
                  onClick={() =>
                    void go.go(() =>
                      client.post('/api/account/billing/checkout', { params, body: { interval: o.interval } }),
                    )
                  }
                >
                  Upgrade to Pro, {o.interval === 'year' ? 'yearly' : 'monthly'}
                  {o.priceUsd !== null ? ` (${usd(o.priceUsd)})` : ''}
                </button>
              ))
            : null}
          <button
            type="button"
            disabled={go.pending}
            onClick={() => void go.go(() => client.post('/api/account/billing/portal', { params, body: {} }))}
          >
            Manage in portal
          </button>
          {live && sub?.interval === 'month' ? (
            <ConfirmButton
              label="Switch to yearly"
              question="Move this subscription to yearly billing, prorated?"
              disabled={annual.pending}
              onConfirm={() => void annual.go()}
            />
          ) : null}
        </div>
      ) : null}
      <ErrorNote error={go.error ?? annual.error} />
      {(go.done ?? annual.done) ? (
        <div class="note ok" role="status">
          {go.done ?? annual.done}
        </div>
      ) : null}
      <h2>Provider deliveries</h2>
      {deliveries.data?.length === 0 ? <p class="muted">None yet.</p> : null}
      <ul class="feed">
        {(deliveries.data ?? []).map((d, i) => (
          <li key={`${d.eventId}-${i}`}>
            {d.type} <span class="label">{d.outcome}</span>
            <div class="at">
              {d.eventId} · {ago(d.at)}
            </div>
          </li>
        ))}
      </ul>
    </>
  );
}
