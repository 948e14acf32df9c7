// Review h67: deleting a board paid by two subscriptions (two checkouts completed before either was
// paid, second-subscription.test.ts) cancels only the one its record follows: the other keeps
// charging for a board that is gone, and the reconcile pass then follows it onto the deleted board.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { applyEvent } from '../../src/billing/apply-event.js';
import { committedAudit } from '../../src/board/committed-audit.js';
import { BillingService } from '../../src/billing/service.js';
import { deleteProject } from '../../src/accounts/projects.js';
import type { BillingProvider, BillingSetup, SubscriptionState } from '../../src/billing/provider.js';
import { billedBoard, billingRecord, boardSubscriptionEvent, reconcilerOn } from '../support/billing.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const silent = pino({ level: 'silent' });

const used = useStore();
const PRICES = { monthly: 'pm', yearly: 'py' };
const T = 2_000_000_000;
const DAY = 86_400_000;

describe('deleting a board paid by two subscriptions', () => {
  it('leaves none of them charging', async () => {
    const b = await billedBoard(used.store);
    const { projectId, customer } = b;
    const ev = (type: string, sub: string, status: string, created: number) =>
      boardSubscriptionEvent(b, type, sub, status, created, PRICES.monthly);
    await applyEvent(used.store, PRICES, ev('customer.subscription.created', 's1', 'active', T), projectId, T);
    await applyEvent(used.store, PRICES, ev('customer.subscription.created', 's2', 'active', T + 60_000), projectId, T);
    expect((await used.store.billing.get(projectId))!.subscriptionId).toBe('s2');

    const subs: SubscriptionState[] = ['s2', 's1'].map((id) => ({
      id,
      customerId: customer,
      status: 'active',
      priceId: PRICES.monthly,
      currentPeriodEnd: T + 30 * DAY,
      cancelAtPeriodEnd: false,
      projectId,
    }));
    const provider = {
      getSubscription: async (id: string) => subs.find((s) => s.id === id)!,
      customerSubscriptions: async () => subs,
      cancelSubscription: async (id: string) => void (subs.find((s) => s.id === id)!.status = 'canceled'),
    } as unknown as BillingProvider;
    const setup = { provider, prices: PRICES } as BillingSetup;
    const billing = new BillingService(used.store, setup, silent, committedAudit(used.store, silent));

    // What DELETE /api/boards/{projectId} does (deleteBoard): cancel, then delete.
    await billing.cancelBoardSubscription(projectId, T + DAY);
    await deleteProject(used.store, projectId);
    await reconcilerOn(used.store, setup).pass(T + DAY + 60_000);

    const record = await used.store.billing.get(projectId);
    expect(
      subs.filter((s) => s.status !== 'canceled').map((s) => s.id),
      `record after the pass: ${record?.subscriptionId} ${record?.status}`,
    ).toEqual([]);
  });

  it('the reconcile pass follows no subscription onto the deleted board', async () => {
    // A board deleted while another of its subscriptions still charged (before deletion listed
    // them): its record's one ended; the pass must not re-attach the record to the other.
    const projectId = unique('proj');
    const customer = `cus_${unique('c')}`;
    await used.store.billing.insert(
      billingRecord(projectId, 'acc', { customerId: customer, subscriptionId: 's2', status: 'canceled', changedAt: T }),
    );
    const subs: SubscriptionState[] = [
      ['s2', 'canceled'],
      ['s1', 'active'],
    ].map(([id, status]) => ({
      id: id!,
      customerId: customer,
      status: status!,
      priceId: PRICES.monthly,
      currentPeriodEnd: T + 30 * DAY,
      cancelAtPeriodEnd: false,
      projectId,
    }));
    const provider = {
      getSubscription: async (id: string) => subs.find((s) => s.id === id)!,
      customerSubscriptions: async () => subs,
      cancelSubscription: async (id: string) => void (subs.find((s) => s.id === id)!.status = 'canceled'),
    } as unknown as BillingProvider;
    await reconcilerOn(used.store, { provider, prices: PRICES } as BillingSetup).pass(T + 60_000);
    expect(await used.store.billing.get(projectId)).toMatchObject({ subscriptionId: 's2', status: 'canceled' });
    // The other one is cancelled instead: nothing charges for a board that is gone.
    expect(subs.map((s) => [s.id, s.status])).toEqual([
      ['s2', 'canceled'],
      ['s1', 'canceled'],
    ]);
  });
});
