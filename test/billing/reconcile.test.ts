// The reconcile pass against a provider held in this test (the BillingProvider port): which
// records it re-reads, how it settles them from the provider's answer, its bound on provider
// calls, and what it does when the provider refuses or cannot be reached.
import { describe, expect, it } from 'vitest';
import { auditRow } from '../../src/audit-row.js';
import { loadConfig } from '../../src/config.js';
import { AppError } from '../../src/errors/app-error.js';
import type { BillingProvider, SubscriptionState } from '../../src/billing/provider.js';
import type { BillingRecord } from '../../store/ports/store.js';
import { billingRecord, reconcilerOn } from '../support/billing.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const used = useStore();
const DAY = 86_400_000;
const HOUR = 3_600_000;
const PRICES = { monthly: 'pm', yearly: 'py' };

/** The provider's side: subscriptions by id, the calls made, and whether it answers at all. */
class Provider {
  readonly subs = new Map<string, SubscriptionState>();
  readonly calls: string[] = [];
  down = false;
  /** Runs inside a getSubscription call, before it answers (another writer meanwhile). */
  during: (() => Promise<void>) | null = null;

  asPort(): BillingProvider {
    const refuse = (): never => {
      throw new Error('not used here');
    };
    return {
      getSubscription: async (id) => {
        this.calls.push(id);
        if (this.down) throw new AppError('PROVIDER_UNAVAILABLE');
        await this.during?.();
        const sub = this.subs.get(id);
        if (!sub) throw new AppError('PROVIDER_REQUEST_FAILED', undefined, { providerCode: 'resource_missing' });
        return sub;
      },
      customerSubscriptions: async (customerId) => {
        this.calls.push(customerId);
        if (this.down) throw new AppError('PROVIDER_UNAVAILABLE');
        return [...this.subs.values()].filter((s) => s.customerId === customerId);
      },
      createCustomer: refuse,
      createCheckoutSession: refuse,
      getCheckoutSession: refuse,
      getPrice: refuse,
      expireCheckoutSession: refuse,
      createPortalSession: refuse,
      changePrice: refuse,
      cancelSubscription: refuse,
      getEvent: refuse,
      refundLatestInvoice: refuse,
      verifyEvent: refuse,
    };
  }
}

function reconciler(provider: Provider, maxCalls = 100) {
  return reconcilerOn(used.store, { provider: provider.asPort(), prices: PRICES }, { intervalMs: HOUR, maxCalls });
}

/** A board with its billing record; `sub` puts its subscription at the provider. */
async function board(plan: 'free' | 'pro', over: Partial<BillingRecord>, sub?: Partial<SubscriptionState>) {
  const projectId = unique('proj');
  const customerId = `cus_${unique('c')}`;
  await used.store.projects.insert({
    _id: projectId,
    version: 1,
    name: projectId,
    ownerId: 'acc',
    plan,
    createdAt: 0,
    lastActivityAt: 0,
  });
  await used.store.billing.insert(billingRecord(projectId, 'acc', { customerId, ...over }));
  return {
    projectId,
    customerId,
    sub: sub && {
      id: over.subscriptionId ?? `sub_${customerId}`,
      customerId,
      status: 'active',
      priceId: PRICES.monthly,
      currentPeriodEnd: null,
      cancelAtPeriodEnd: false,
      projectId,
      ...sub,
    },
  };
}

const planOf = async (projectId: string) => (await used.store.projects.get(projectId))!.plan;
const recordOf = async (projectId: string) => (await used.store.billing.get(projectId))!;
const delivery = (projectId: string, eventId: string, outcome: string, at: number) =>
  used.store.audit.insert(
    auditRow({
      at,
      actor: 'provider',
      action: 'billing.webhook',
      projectId,
      origin: { requestId: unique('req'), address: '127.0.0.1' },
      data: { eventId, type: 'customer.subscription.created', outcome },
    }),
  );

describe('the reconcile pass', () => {
  it('re-reads only the records that could be stale, and settles each record and plan from the provider', async () => {
    const now = Date.now();
    const provider = new Provider();
    const put = (b: { sub?: SubscriptionState | undefined }) => b.sub && provider.subs.set(b.sub.id, b.sub);
    // A delivery seen and never settled (the node died): no subscription id on the record yet.
    const unsettled = await board('free', {}, { status: 'active', currentPeriodEnd: now + 30 * DAY });
    put(unsettled);
    await delivery(unsettled.projectId, 'evt_lost', 'pending', now - HOUR);
    // One that failed: the provider retries it, and the pass re-reads it meanwhile.
    const failed = await board('free', { subscriptionId: 'sub_failed' }, { status: 'active' });
    put(failed);
    await delivery(failed.projectId, 'evt_failed', 'pending', now - HOUR);
    await delivery(failed.projectId, 'evt_failed', 'failed', now - HOUR);
    // Settled deliveries and a period far from its end: not stale.
    const settled = await board(
      'pro',
      { subscriptionId: 'sub_settled', status: 'active', currentPeriodEnd: now + 10 * DAY },
      { status: 'canceled' },
    );
    put(settled);
    await delivery(settled.projectId, 'evt_ok', 'pending', now - HOUR);
    await delivery(settled.projectId, 'evt_ok', 'applied', now - HOUR);
    // A period that ended: renewed at the provider (its event lost), or ended as the customer asked.
    const renewed = await board(
      'pro',
      { subscriptionId: 'sub_renewed', status: 'active', currentPeriodEnd: now - HOUR },
      { status: 'active', currentPeriodEnd: now + 30 * DAY },
    );
    put(renewed);
    const ended = await board(
      'pro',
      { subscriptionId: 'sub_ended', status: 'active', currentPeriodEnd: now - HOUR, cancelAtPeriodEnd: true },
      { status: 'canceled', cancelAtPeriodEnd: true },
    );
    put(ended);
    // Past due beyond its grace here (Free), paid at the provider.
    const paid = await board(
      'free',
      { subscriptionId: 'sub_paid', status: 'past_due', pastDueSince: now - 30 * DAY },
      { status: 'active' },
    );
    put(paid);
    // Canceled: nothing to learn.
    const canceled = await board('free', { subscriptionId: 'sub_canceled', status: 'canceled' }, { status: 'active' });
    put(canceled);

    const counts = await reconciler(provider).pass(now);
    // The ended one's customer is listed too: another of its subscriptions could still charge.
    expect(provider.calls.sort()).toEqual(
      [unsettled.customerId, 'sub_ended', ended.customerId, 'sub_failed', 'sub_paid', 'sub_renewed'].sort(),
    );
    expect(counts).toEqual({
      candidates: 5,
      reread: 6,
      changed: 5,
      planChanged: 4,
      conflicts: 0,
      failed: 0,
      deferred: 0,
    });
    expect(await recordOf(unsettled.projectId)).toMatchObject({
      subscriptionId: unsettled.sub!.id,
      status: 'active',
      interval: 'month',
      reconciledAt: now,
      changedAt: Math.floor(now / 1000) * 1000, // in whole seconds, as the provider stamps its events
    });
    expect(await planOf(unsettled.projectId)).toBe('pro');
    expect(await planOf(failed.projectId)).toBe('pro');
    expect(await recordOf(renewed.projectId)).toMatchObject({ status: 'active', currentPeriodEnd: now + 30 * DAY });
    expect(await planOf(renewed.projectId)).toBe('pro');
    expect(await recordOf(ended.projectId)).toMatchObject({ status: 'canceled' });
    expect(await planOf(ended.projectId)).toBe('free');
    expect(await recordOf(paid.projectId)).toMatchObject({ status: 'active', pastDueSince: null });
    expect(await planOf(paid.projectId)).toBe('pro');
    expect(await recordOf(settled.projectId)).toMatchObject({ status: 'active' });
    expect(await planOf(canceled.projectId)).toBe('free');

    // Settled: the next pass finds nothing to ask.
    provider.calls.length = 0;
    expect((await reconciler(provider).pass(now + 60_000)).candidates).toBe(0);
    expect(provider.calls).toEqual([]);
  });

  it('makes at most its bound of provider calls a pass; the rest follow in the next passes, least recently re-read first', async () => {
    const now = Date.now();
    const provider = new Provider();
    const boards = [];
    for (let i = 0; i < 5; i++) {
      const b = await board(
        'free',
        { subscriptionId: `sub_${unique('b')}`, status: 'past_due', pastDueSince: now - 30 * DAY },
        { status: 'active' },
      );
      provider.subs.set(b.sub!.id, b.sub!);
      boards.push(b);
    }
    const ids = new Set(boards.map((b) => b.sub!.id));
    const pass = reconciler(provider, 2);
    const ours = () => provider.calls.filter((c) => ids.has(c));
    const passes = [];
    for (let i = 0; i < 3; i++) {
      const before = ours().length;
      passes.push({ counts: await pass.pass(now + i * 60_000), calls: ours().length - before });
    }
    expect(passes.map((p) => p.calls)).toEqual([2, 2, 1]);
    expect(passes.map((p) => p.counts.deferred)).toEqual([3, 1, 0]);
    expect(new Set(ours()).size).toBe(5);
    for (const b of boards) expect(await planOf(b.projectId)).toBe('pro');
    expect(pass.totals).toMatchObject({ passes: 3, reread: 5, deferred: 4 });
  });

  it('leaves a subscription of another customer to a person, once, and stops a pass when the provider cannot be reached', async () => {
    const now = Date.now();
    const provider = new Provider();
    const foreign = await board('free', {
      subscriptionId: 'sub_foreign',
      status: 'past_due',
      pastDueSince: now - 30 * DAY,
    });
    provider.subs.set('sub_foreign', {
      id: 'sub_foreign',
      customerId: 'cus_someone_else',
      status: 'active',
      priceId: null,
      currentPeriodEnd: null,
      cancelAtPeriodEnd: false,
      projectId: null,
    });
    const held = await recordOf(foreign.projectId);
    const counts = await reconciler(provider).pass(now);
    expect(counts).toMatchObject({ reread: 1, conflicts: 1, changed: 0 });
    expect(await recordOf(foreign.projectId)).toEqual({ ...held, version: held.version + 1, reconciledAt: now });
    expect(await planOf(foreign.projectId)).toBe('free');
    expect((await reconciler(provider).pass(now + 60_000)).candidates).toBe(0);

    const waiting = [];
    for (let i = 0; i < 3; i++) {
      const b = await board(
        'free',
        { subscriptionId: `sub_${unique('w')}`, status: 'past_due', pastDueSince: now - 30 * DAY },
        { status: 'active' },
      );
      provider.subs.set(b.sub!.id, b.sub!);
      waiting.push(b);
    }
    provider.down = true;
    provider.calls.length = 0;
    expect(await reconciler(provider).pass(now + 120_000)).toMatchObject({
      candidates: 3,
      reread: 1,
      failed: 1,
      deferred: 3,
    });
    expect(provider.calls).toHaveLength(1);
    for (const b of waiting) expect((await recordOf(b.projectId)).reconciledAt ?? null).toBeNull();
    provider.down = false;
    expect(await reconciler(provider).pass(now + 180_000)).toMatchObject({
      candidates: 3,
      reread: 3,
      planChanged: 3,
      deferred: 0,
    });
  });

  it('keeps an event applied while the provider was asked when it is newer than the answer', async () => {
    const now = Date.now();
    const provider = new Provider();
    const b = await board(
      'free',
      { subscriptionId: 'sub_raced', status: 'past_due', pastDueSince: now - 30 * DAY },
      { status: 'active' },
    );
    provider.subs.set('sub_raced', b.sub!);
    provider.during = async () => {
      provider.during = null;
      const current = await recordOf(b.projectId);
      await used.store.billing.update(b.projectId, current.version, { status: 'canceled', changedAt: now + 5000 });
    };
    expect(await reconciler(provider).pass(now)).toMatchObject({ reread: 1, changed: 0 });
    expect(await recordOf(b.projectId)).toMatchObject({ status: 'canceled', changedAt: now + 5000, reconciledAt: now });
  });
});

describe('its configuration', () => {
  it('runs every hour with 100 provider calls a pass by default; an interval of 0 turns it off', () => {
    expect(loadConfig({}).billingReconcile).toEqual({ intervalMs: 3_600_000, maxCalls: 100 });
    expect(
      loadConfig({ BILLING_RECONCILE_INTERVAL_SECONDS: '0', BILLING_RECONCILE_MAX_CALLS: '5' }).billingReconcile,
    ).toEqual({ intervalMs: 0, maxCalls: 5 });
    expect(() => loadConfig({ BILLING_RECONCILE_MAX_CALLS: '0' })).toThrow(/BILLING_RECONCILE_MAX_CALLS/);
  });
});
