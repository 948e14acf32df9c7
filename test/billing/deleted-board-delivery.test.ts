// A checkout completed after its board was deleted (the session was open when the owner deleted
// the board, and paid after) made a subscription that charged every month for a board nobody can
// reach (the portal answers 403). The delivery that names the deleted board cancels it at once and
// audits it, without bringing the board back; a provider away fails the delivery, and its
// redelivery cancels. When no delivery ever comes, the reconcile pass finds the board gone and
// does the same.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { deleteProject } from '../../src/accounts/projects.js';
import { committedAudit } from '../../src/board/committed-audit.js';
import { BillingService } from '../../src/billing/service.js';
import type { BillingProvider, BillingSetup, ProviderEvent, SubscriptionState } from '../../src/billing/provider.js';
import { AppError } from '../../src/errors/app-error.js';
import { billedBoard, boardSubscriptionEvent, reconcilerOn } from '../support/billing.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const silent = pino({ level: 'silent' });

const used = useStore();
const PRICES = { monthly: 'pm', yearly: 'py' };
const T = 2_000_000_000;
const HOUR = 3_600_000;

function provider(customer: string, projectId: string) {
  const subs: SubscriptionState[] = [];
  const state = { down: false };
  /** Subscription ids whose next cancel fails (the provider away for that call). */
  const failOnce = new Set<string>();
  /** How many times the customer's subscriptions were listed. */
  const listed = { times: 0 };
  const port = {
    customerSubscriptions: async (customerId: string) => {
      if (customerId === customer) listed.times++;
      if (state.down) throw new AppError('PROVIDER_UNAVAILABLE');
      return subs.filter((s) => s.customerId === customerId);
    },
    cancelSubscription: async (id: string) => {
      if (state.down || failOnce.delete(id)) throw new AppError('PROVIDER_UNAVAILABLE');
      subs.find((s) => s.id === id)!.status = 'canceled';
    },
  } as unknown as BillingProvider;
  const paid = (id: string) =>
    subs.push({
      id,
      customerId: customer,
      status: 'active',
      priceId: PRICES.monthly,
      currentPeriodEnd: null,
      cancelAtPeriodEnd: false,
      projectId,
    });
  return { subs, state, failOnce, listed, paid, setup: { provider: port, prices: PRICES } as BillingSetup };
}

const checkoutCompleted = (
  b: { projectId: string; customer: string },
  sub: string,
  created: number,
): ProviderEvent => ({
  id: `evt_${unique('e')}`,
  type: 'checkout.session.completed',
  created,
  object: { id: `cs_${unique('s')}`, customer: b.customer, client_reference_id: b.projectId, subscription: sub },
});

describe('a delivery naming a deleted board', () => {
  it('cancels the subscription a checkout paid after the deletion made, audits it, and does not recreate the board', async () => {
    const b = await billedBoard(used.store);
    const p = provider(b.customer, b.projectId);
    const billing = new BillingService(used.store, p.setup, silent, committedAudit(used.store, silent));
    const origin = { requestId: unique('req'), address: '127.0.0.1' };
    // The owner deletes the board (nothing charges yet), then pays the session still open.
    await billing.cancelBoardSubscription(b.projectId, T);
    await deleteProject(used.store, b.projectId);
    p.paid('sub_late');
    await billing.replay(checkoutCompleted(b, 'sub_late', T + 60_000), origin, T + 60_000);
    await billing.replay(
      boardSubscriptionEvent(b, 'customer.subscription.created', 'sub_late', 'active', T + 60_000, PRICES.monthly),
      origin,
      T + 60_000,
    );

    expect(p.subs.map((s) => [s.id, s.status])).toEqual([['sub_late', 'canceled']]);
    expect(await used.store.projects.get(b.projectId)).toBeNull();
    expect(await used.store.billing.get(b.projectId)).toMatchObject({ subscriptionId: 'sub_late', status: 'canceled' });
    const rows = await used.store.audit.find({ projectId: b.projectId, action: 'billing.subscription.cancel' });
    expect(rows.map((r) => r.data)).toEqual([
      expect.objectContaining({ subscriptionId: 'sub_late', reason: 'board-deleted', requestId: origin.requestId }),
    ]);
  });

  it('fails the delivery while the provider cannot cancel, and the redelivery cancels', async () => {
    const b = await billedBoard(used.store);
    const p = provider(b.customer, b.projectId);
    const billing = new BillingService(used.store, p.setup, silent, committedAudit(used.store, silent));
    const origin = { requestId: unique('req'), address: '127.0.0.1' };
    await deleteProject(used.store, b.projectId);
    p.paid('sub_late');
    const event = boardSubscriptionEvent(
      b,
      'customer.subscription.created',
      'sub_late',
      'active',
      T + 60_000,
      PRICES.monthly,
    );
    p.state.down = true;
    await expect(billing.replay(event, origin, T + 60_000)).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    const outcomes = async () =>
      (await used.store.audit.find({ projectId: b.projectId, action: 'billing.webhook' }))
        .map((r) => String(r.data.outcome))
        .sort();
    expect(await outcomes()).toEqual(['failed', 'pending']);
    expect(p.subs[0]!.status).toBe('active');

    p.state.down = false;
    await billing.replay(event, origin, T + 120_000);
    expect(p.subs[0]!.status).toBe('canceled');
    expect(await outcomes()).toEqual(['duplicate', 'failed', 'pending', 'pending']);
    expect(await used.store.projects.get(b.projectId)).toBeNull();
  });

  it('audits each subscription it cancelled when a later cancel fails, the first try’s too, once', async () => {
    const b = await billedBoard(used.store);
    const p = provider(b.customer, b.projectId);
    const billing = new BillingService(used.store, p.setup, silent, committedAudit(used.store, silent));
    const origin = { requestId: unique('req'), address: '127.0.0.1' };
    await deleteProject(used.store, b.projectId);
    // Two checkouts paid after the deletion: two subscriptions charge for the deleted board.
    p.paid('sub_a');
    p.paid('sub_b');
    const event = boardSubscriptionEvent(b, 'customer.subscription.created', 'sub_a', 'active', T, PRICES.monthly);
    p.failOnce.add('sub_b');
    await expect(billing.replay(event, origin, T)).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    expect(p.subs.map((s) => [s.id, s.status])).toEqual([
      ['sub_a', 'canceled'],
      ['sub_b', 'active'],
    ]);
    await billing.replay(event, origin, T + 60_000); // the redelivery
    expect(p.subs.map((s) => s.status)).toEqual(['canceled', 'canceled']);
    const cancelRows = async () =>
      (await used.store.audit.find({ projectId: b.projectId, action: 'billing.subscription.cancel' }))
        .map((r) => r.data.subscriptionId)
        .sort();
    expect(await cancelRows(), 'a cancellation at the provider with no audit row').toEqual(['sub_a', 'sub_b']);
    // Another delivery (or node) while the provider still lists both as charging: one row each still.
    for (const s of p.subs) s.status = 'active';
    await billing.replay({ ...event, id: `evt_${unique('e')}` }, origin, T + 120_000);
    expect(await cancelRows()).toEqual(['sub_a', 'sub_b']);
  });

  it('never delivered (Stripe gave up): the reconcile pass cancels it, audited alike, then a day later once more', async () => {
    const b = await billedBoard(used.store);
    const p = provider(b.customer, b.projectId);
    const billing = new BillingService(used.store, p.setup, silent, committedAudit(used.store, silent));
    const pass = (at: number) => reconcilerOn(used.store, p.setup, { intervalMs: HOUR, maxCalls: 100 }).pass(at);
    // A Free board deleted by its owner; a session opened as it was deleted is paid after, and none
    // of its deliveries ever arrives: the record names no subscription.
    await billing.cancelBoardSubscription(b.projectId, T);
    await deleteProject(used.store, b.projectId);
    p.paid('sub_never_told');
    await pass(T + HOUR);
    expect(p.subs.map((s) => [s.id, s.status])).toEqual([['sub_never_told', 'canceled']]);
    const cancelRows = async () =>
      (await used.store.audit.find({ projectId: b.projectId, action: 'billing.subscription.cancel' })).map(
        (r) => r.data,
      );
    expect(await cancelRows()).toEqual([
      expect.objectContaining({ subscriptionId: 'sub_never_told', reason: 'board-deleted' }),
    ]);
    expect(await used.store.projects.get(b.projectId)).toBeNull();

    // Another session, paid later that day: the next passes leave it until no session can be paid
    // any more, then cancel it; after that the customer is not asked again.
    p.paid('sub_paid_later');
    const listings = p.listed.times;
    await pass(T + 2 * HOUR);
    expect(p.listed.times).toBe(listings);
    await pass(T + HOUR + 86_400_000);
    expect(p.subs.map((s) => s.status)).toEqual(['canceled', 'canceled']);
    expect((await cancelRows()).map((d) => d.subscriptionId).sort()).toEqual(['sub_never_told', 'sub_paid_later']);
    await pass(T + 3 * 86_400_000);
    expect(p.listed.times).toBe(listings + 1);
  });
});
