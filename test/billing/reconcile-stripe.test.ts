// The reconcile pass in a running node against stripe-mock (the Stripe SDK at STRIPE_API_BASE):
// it runs at start, settles a stale board from Stripe's answer, counts what it did on /metrics,
// cancels what still charges for a deleted board, and does not run at all with
// BILLING_RECONCILE_INTERVAL_SECONDS=0.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import type { Store } from '../../store/ports/store.js';
import { billingRecord } from '../support/billing.js';
import { scrape } from '../support/metrics.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tempDir, unique, type TempDir } from '../support/temp.js';

const stripeBase = inject('stripeBase');
const DAY = 86_400_000;
const env = (over: Record<string, string> = {}): Record<string, string> => ({
  STRIPE_SECRET_KEY: 'sk_test_123',
  STRIPE_WEBHOOK_SECRET: 'whsec_reconcile',
  STRIPE_PRICE_MONTHLY: 'price_m',
  STRIPE_PRICE_YEARLY: 'price_y',
  STRIPE_API_BASE: stripeBase ?? '',
  METRICS_PORT: '0',
  ...over,
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A store holding one board past due for 30 days (Free), billed to stripe-mock's fixture customer, whose subscription Stripe holds as active. */
async function staleStore(): Promise<{ dir: TempDir; store: Store; projectId: string }> {
  const fixture = (await (
    await fetch(`${stripeBase}/v1/subscriptions/sub_probe`, { headers: { authorization: 'Bearer sk_test_123' } })
  ).json()) as { customer: string; status: string };
  expect(fixture.status).toBe('active');
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const store = await openEmbeddedStore(dir.path);
  const projectId = unique('proj');
  const now = Date.now();
  await store.projects.insert({
    _id: projectId,
    version: 1,
    name: projectId,
    ownerId: 'acc',
    plan: 'free',
    createdAt: now,
    lastActivityAt: now,
  });
  await store.billing.insert(
    billingRecord(projectId, 'acc', {
      customerId: fixture.customer,
      subscriptionId: `sub_${unique('s')}`,
      status: 'past_due',
      pastDueSince: now - 30 * DAY,
    }),
  );
  return { dir, store, projectId };
}

async function serve(store: Store, over?: Record<string, string>): Promise<TestServer> {
  const srv = await startTestServer(env(over), store);
  cleanups.push(() => srv.stop());
  return srv;
}

describe.skipIf(!stripeBase)('the reconcile pass in a running node', () => {
  it('runs at start, settles the stale board from Stripe, and counts it on /metrics', async () => {
    const { store, projectId } = await staleStore();
    const srv = await serve(store);
    await expect
      .poll(async () => (await store.billing.get(projectId))!.reconciledAt ?? null, { timeout: 15_000 })
      .not.toBeNull();
    expect(await store.billing.get(projectId)).toMatchObject({ status: 'active', pastDueSince: null });
    expect((await store.projects.get(projectId))!.plan).toBe('pro');
    const metrics = await scrape(srv.server.metricsPort!);
    expect(metrics.value('board_billing_reconcile_passes_total')).toBe(1);
    expect(metrics.value('board_billing_reconcile_records_total', { outcome: 'reread' })).toBe(1);
    expect(metrics.value('board_billing_reconcile_records_total', { outcome: 'plan_changed' })).toBe(1);
    expect(metrics.value('board_billing_reconcile_records_total', { outcome: 'failed' })).toBe(0);

    // Settled: a pass run on demand asks Stripe nothing more.
    expect(await srv.server.reconcileBilling()).toMatchObject({ candidates: 0, reread: 0 });
    // Past due again later (an event says so): the next pass, an interval on, asks again.
    const record = (await store.billing.get(projectId))!;
    await store.billing.update(projectId, record.version, { status: 'past_due', pastDueSince: srv.now() - 30 * DAY });
    srv.advance(3_600_000);
    expect(await srv.server.reconcileBilling()).toMatchObject({ candidates: 1, reread: 1, changed: 1, planChanged: 0 });
    expect(
      (await scrape(srv.server.metricsPort!)).value('board_billing_reconcile_records_total', { outcome: 'reread' }),
    ).toBe(2);
  });

  it('cancels at Stripe, with its audit row, what still charges for a board deleted since', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const store = await openEmbeddedStore(dir.path);
    const projectId = unique('proj');
    // A deleted board's record (kept) whose checkout was paid after, its deliveries never come:
    // Stripe lists its customer's subscription as active (stripe-mock's fixture, of no board).
    await store.billing.insert(billingRecord(projectId, 'acc', { customerId: 'cus_of_a_deleted_board' }));
    await serve(store);
    const cancelled = async () =>
      (await store.audit.find({ projectId, action: 'billing.subscription.cancel' })).map((r) => r.data);
    await expect
      .poll(cancelled, { timeout: 15_000 })
      .toEqual([expect.objectContaining({ subscriptionId: expect.stringMatching(/^sub_/), reason: 'board-deleted' })]);
    expect((await store.billing.get(projectId))!.boardGone).toMatchObject({ listedAt: expect.any(Number) });
    expect(await store.projects.get(projectId)).toBeNull();
  });

  it('does not run with an interval of 0', async () => {
    const { store, projectId } = await staleStore();
    const srv = await serve(store, { BILLING_RECONCILE_INTERVAL_SECONDS: '0' });
    // A request answered after start: by then a pass at start would have been under way.
    expect((await fetch(`${srv.url}/healthz`)).status).toBe(200);
    expect((await scrape(srv.server.metricsPort!)).value('board_billing_reconcile_passes_total')).toBe(0);
    expect(await store.billing.get(projectId)).toMatchObject({ status: 'past_due' });
    expect((await store.projects.get(projectId))!.plan).toBe('free');
  });
});
