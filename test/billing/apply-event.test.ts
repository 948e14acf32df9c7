// A provider event applied once: the effect and its id land in one version-checked write, the
// plan is settled from the record on every outcome, and the record keeps a bounded window of ids.
import { describe, expect, it } from 'vitest';
import { APPLIED_IDS_KEPT, applyEvent } from '../../src/billing/apply-event.js';
import type { BillingSetup, ProviderEvent } from '../../src/billing/provider.js';
import { settleFromProvider } from '../../src/billing/settle.js';
import { billedBoard } from '../support/billing.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const used = useStore();
const PRICES = { monthly: 'pm', yearly: 'py' };

const board = () => billedBoard(used.store);

const subscriptionEvent = (customer: string, status: string, created: number): ProviderEvent => ({
  id: `evt_${unique('e')}`,
  type: 'customer.subscription.updated',
  created,
  object: { id: `sub_${customer}`, customer, status, items: { data: [{ price: { id: PRICES.monthly } }] } },
});

describe('applying a provider event', () => {
  it('writes the effect and the event id together, and settles a plan left unsettled on a duplicate', async () => {
    const { projectId, customer } = await board();
    const event = subscriptionEvent(customer, 'active', 1_000_000);
    expect(await applyEvent(used.store, PRICES, event, projectId, Date.now())).toBe('applied');
    const record = (await used.store.billing.get(projectId))!;
    expect(record).toMatchObject({ status: 'active', changedAt: 1_000_000, appliedEventIds: [event.id] });
    expect((await used.store.projects.get(projectId))!.plan).toBe('pro');

    // As a crash after that write leaves it: the plan not settled, the log not written.
    const project = (await used.store.projects.get(projectId))!;
    await used.store.projects.update(projectId, project.version, { plan: 'free' });
    await used.store.billingEvents.delete(event.id);
    expect(await applyEvent(used.store, PRICES, event, projectId, Date.now())).toBe('duplicate');
    expect((await used.store.billing.get(projectId))!.version).toBe(record.version);
    expect((await used.store.projects.get(projectId))!.plan).toBe('pro');
    expect(await used.store.billingEvents.versionOf(event.id)).not.toBeNull();
  });

  it('keeps the newest ids only; an older event past them is still never applied again', async () => {
    const { projectId, customer } = await board();
    const events = Array.from({ length: APPLIED_IDS_KEPT + 5 }, (_, i) =>
      subscriptionEvent(customer, i % 2 ? 'active' : 'past_due', 1_000_000 + i * 1000),
    );
    for (const e of events) expect(await applyEvent(used.store, PRICES, e, projectId, Date.now())).toBe('applied');
    const record = (await used.store.billing.get(projectId))!;
    expect(record.appliedEventIds).toEqual(events.slice(-APPLIED_IDS_KEPT).map((e) => e.id));
    // The first one, out of the window: the log says so; without the log, it is older than the last change.
    expect(await applyEvent(used.store, PRICES, events[0]!, projectId, Date.now())).toBe('duplicate');
    await used.store.billingEvents.delete(events[0]!.id);
    expect(await applyEvent(used.store, PRICES, events[0]!, projectId, Date.now())).toBe('ignored');
    expect((await used.store.billing.get(projectId))!.version).toBe(record.version);
  });
});

/** Events as the provider sends them for one customer (its id filled in by `run`). */
const change = (type: string, id: string, status: string, created: number, cancelAtPeriodEnd = false) =>
  ({
    id: `evt_${unique('e')}`,
    type: `customer.subscription.${type}`,
    created,
    object: {
      id,
      status,
      cancel_at_period_end: cancelAtPeriodEnd,
      items: { data: [{ price: { id: PRICES.monthly } }] },
    },
  }) as ProviderEvent;
const checkout = (subscription: string, created: number) =>
  ({
    id: `evt_${unique('e')}`,
    type: 'checkout.session.completed',
    created,
    object: { id: 'cs_1', subscription },
  }) as ProviderEvent;
const invoice = (type: 'paid' | 'payment_failed', subscription: string | null, created: number) =>
  ({
    id: `evt_${unique('e')}`,
    type: `invoice.${type}`,
    created,
    object: { id: `in_${unique('i')}`, subscription },
  }) as ProviderEvent;

type Board = Awaited<ReturnType<typeof board>>;

/** Applies `events` in the order given to the board, as its customer's; what came of each. */
async function deliver(b: Board, events: ProviderEvent[]) {
  const outcomes = [];
  for (const event of events) {
    event.object.customer = b.customer;
    outcomes.push(await applyEvent(used.store, PRICES, event, b.projectId, Date.now()));
  }
  return outcomes;
}

/** A re-read of the board's subscription at `now`, the provider answering s1 at `status` (after `meanwhile`). */
async function reRead(b: Board, status: string, periodEnd: number, now: number, meanwhile = async () => {}) {
  const s1 = {
    id: 's1',
    customerId: b.customer,
    status,
    priceId: PRICES.monthly,
    currentPeriodEnd: periodEnd,
    cancelAtPeriodEnd: false,
    projectId: b.projectId,
  };
  // The customer's only subscription is s1 (a re-read of an ended one lists the customer's too).
  const provider = { getSubscription: async () => (await meanwhile(), s1), customerSubscriptions: async () => [s1] };
  await settleFromProvider(used.store, { provider, prices: PRICES } as unknown as BillingSetup, b.projectId, now);
}

/** Applies `events` in the order given to a fresh board; its record and plan after. */
async function run(events: ProviderEvent[]) {
  const b = await board();
  await deliver(b, events);
  const record = (await used.store.billing.get(b.projectId))!;
  return {
    subscriptionId: record.subscriptionId,
    status: record.status,
    plan: (await used.store.projects.get(b.projectId))!.plan,
  };
}

describe('the provider’s sequences, delivered in any order (Stripe stamps events in whole seconds)', () => {
  const T = 2_000_000_000;
  const DAY = 86_400_000;
  it('a first checkout ends active and Pro, its events in the provider’s order or reversed, all in one second', async () => {
    const inOrder = () => [
      checkout('s1', T),
      change('created', 's1', 'incomplete', T),
      invoice('paid', 's1', T),
      change('updated', 's1', 'active', T),
    ];
    expect(await run(inOrder())).toEqual({ subscriptionId: 's1', status: 'active', plan: 'pro' });
    expect(await run(inOrder().reverse())).toEqual({ subscriptionId: 's1', status: 'active', plan: 'pro' });
  });

  for (const ended of ['canceled', 'incomplete_expired', 'unpaid', 'past_due'])
    it(`a new subscription after one ${ended} ends active, its checkout delivered first in the same second`, async () => {
      const gone = ended === 'canceled' || ended === 'incomplete_expired';
      expect(
        await run([
          change('created', 's1', 'active', T - 90 * DAY),
          change(gone ? 'deleted' : 'updated', 's1', ended, T - 30 * DAY),
          checkout('s2', T),
          change('created', 's2', 'incomplete', T),
          invoice('paid', 's2', T),
          change('updated', 's2', 'active', T),
        ]),
      ).toEqual({ subscriptionId: 's2', status: 'active', plan: 'pro' });
    });

  it('overdue, a second checkout: its invoice and checkout delivered before its subscription', async () => {
    expect(
      await run([
        change('created', 's1', 'active', T - 90 * DAY),
        change('updated', 's1', 'past_due', T - DAY),
        invoice('paid', 's2', T),
        checkout('s2', T),
        change('created', 's2', 'active', T),
        change('deleted', 's1', 'canceled', T + DAY), // the old one's dunning ends it after
      ]),
    ).toEqual({ subscriptionId: 's2', status: 'active', plan: 'pro' });
  });

  it('a trial that turns active, a retry that pays, and a card updated in the second the payment failed', async () => {
    expect(
      await run([
        checkout('s1', T),
        change('created', 's1', 'trialing', T),
        change('updated', 's1', 'active', T + 14 * DAY),
        invoice('paid', 's1', T + 14 * DAY),
      ]),
    ).toMatchObject({ status: 'active', plan: 'pro' });
    expect(
      await run([
        change('created', 's1', 'active', T),
        change('updated', 's1', 'past_due', T + DAY),
        invoice('payment_failed', 's1', T + DAY),
        invoice('paid', 's1', T + 3 * DAY),
        change('updated', 's1', 'active', T + 3 * DAY),
      ]),
    ).toMatchObject({ status: 'active', plan: 'pro' });
    expect(
      await run([
        change('created', 's1', 'active', T),
        invoice('payment_failed', 's1', T + DAY),
        change('updated', 's1', 'active', T + DAY),
      ]),
    ).toMatchObject({ status: 'active', plan: 'pro' });
  });

  it('a checkout stamped a second after its subscription’s events does not make them older', async () => {
    const events = () => [
      checkout('s1', T + 1000),
      change('created', 's1', 'incomplete', T),
      invoice('paid', 's1', T),
      change('updated', 's1', 'active', T),
    ];
    expect(await run(events())).toEqual({ subscriptionId: 's1', status: 'active', plan: 'pro' });
    const [first, ...rest] = events();
    expect(await run([rest[0]!, first!, ...rest.slice(1)])).toEqual({
      subscriptionId: 's1',
      status: 'active',
      plan: 'pro',
    });
  });

  it('a checkout after a subscription ended names the new one, so a re-read finds it even when its events are lost', async () => {
    expect(
      await run([
        change('created', 's1', 'active', T - 90 * DAY),
        change('deleted', 's1', 'canceled', T - 30 * DAY),
        checkout('s2', T),
      ]),
    ).toMatchObject({ subscriptionId: 's2' });
  });

  it('a new subscription’s changes are not older than the old one’s last, whichever came first', async () => {
    // Overdue, a second checkout; the old one's end (a day later) delivered before the new one's events.
    expect(
      await run([
        change('created', 's1', 'active', T - 90 * DAY),
        change('updated', 's1', 'past_due', T - DAY),
        change('deleted', 's1', 'canceled', T + DAY),
        checkout('s2', T),
        change('created', 's2', 'incomplete', T),
        invoice('paid', 's2', T),
        change('updated', 's2', 'active', T),
      ]),
    ).toEqual({ subscriptionId: 's2', status: 'active', plan: 'pro' });
    // A late event of a subscription replaced after it ended does not take the record back.
    expect(
      await run([
        change('created', 's1', 'active', T - 90 * DAY),
        change('deleted', 's1', 'canceled', T - 30 * DAY),
        checkout('s2', T),
        change('created', 's2', 'active', T),
        change('updated', 's1', 'active', T - 60 * DAY),
        change('deleted', 's2', 'canceled', T + 30 * DAY),
      ]),
    ).toEqual({ subscriptionId: 's2', status: 'canceled', plan: 'free' });
  });

  it('a new subscription’s changes are not older than a re-read of the old one made before they came', async () => {
    const b = await board();
    await deliver(b, [
      change('created', 's1', 'active', T - 90 * DAY),
      change('deleted', 's1', 'canceled', T - 30 * DAY),
    ]);
    await reRead(b, 'canceled', T - 30 * DAY, T + 60_000); // a minute after s2 was checked out
    await deliver(b, [
      checkout('s2', T),
      change('created', 's2', 'incomplete', T),
      change('updated', 's2', 'active', T),
    ]);
    expect(await used.store.billing.get(b.projectId)).toMatchObject({ subscriptionId: 's2', status: 'active' });
  });

  it('an invoice naming no subscription (a one-off) leaves an active board as it is', async () => {
    expect(await run([change('created', 's1', 'active', T), invoice('payment_failed', null, T + DAY)])).toEqual({
      subscriptionId: 's1',
      status: 'active',
      plan: 'pro',
    });
  });

  it('a re-read of the old subscription answered after a new one was named writes nothing of the old one', async () => {
    const b = await board();
    await deliver(b, [
      change('created', 's1', 'active', T - 90 * DAY),
      change('deleted', 's1', 'canceled', T - 30 * DAY),
    ]);
    // While the provider answers the re-read of s1, the checkout of s2 and its events land.
    await reRead(b, 'canceled', T - 30 * DAY, T + 5_000, async () => {
      await deliver(b, [
        checkout('s2', T),
        change('created', 's2', 'incomplete', T),
        change('updated', 's2', 'active', T),
      ]);
    });
    expect(await used.store.billing.get(b.projectId)).toMatchObject({
      subscriptionId: 's2',
      status: 'active',
      reconciledAt: T + 5_000,
    });
    expect((await used.store.projects.get(b.projectId))!.plan).toBe('pro');
  });

  it('a re-read from the provider a moment into a second does not make an event stamped in that second older', async () => {
    const b = await board();
    await deliver(b, [change('created', 's1', 'active', T - DAY)]);
    await reRead(b, 'active', T + 30 * DAY, T + 300); // read active, 300 ms into second T
    // The cancel came at T + 0.7 s, stamped T.
    expect(await deliver(b, [change('deleted', 's1', 'canceled', T)])).toEqual(['applied']);
    expect(await used.store.billing.get(b.projectId)).toMatchObject({ status: 'canceled' });
  });

  it('a cancel at the period’s end, then the end: Free', async () => {
    expect(
      await run([
        change('created', 's1', 'active', T),
        change('updated', 's1', 'active', T + DAY, true),
        change('deleted', 's1', 'canceled', T + 30 * DAY, true),
        change('updated', 's1', 'active', T + 30 * DAY, true), // delivered after, in the same second
      ]),
    ).toEqual({ subscriptionId: 's1', status: 'canceled', plan: 'free' });
  });
});
