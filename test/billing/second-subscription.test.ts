// Two subscriptions for one board (two checkout sessions opened before either was paid: checkout
// refuses a second only once the first is live). When the one the record follows ends, the board
// must stay Pro while the other is still active and charged (DOMAIN.md "Billing": "The project's
// plan is Pro while its subscription is active or trialing"); and if an event is missed, the
// reconcile pass or an operator's re-read must find the live one.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { applyEvent } from '../../src/billing/apply-event.js';
import { committedAudit } from '../../src/board/committed-audit.js';
import { BillingService } from '../../src/billing/service.js';
import { AppError } from '../../src/errors/app-error.js';
import { settleFromProvider } from '../../src/billing/settle.js';
import type { BillingProvider, BillingSetup, ProviderEvent, SubscriptionState } from '../../src/billing/provider.js';
import { billedBoard, boardSubscriptionEvent, reconcilerOn } from '../support/billing.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const silent = pino({ level: 'silent' });

const used = useStore();
const PRICES = { monthly: 'pm', yearly: 'py' };
const T = 2_000_000_000;
const DAY = 86_400_000;

describe('a board paid by two subscriptions', () => {
  it('stays Pro when the one its record follows is cancelled while the other is active', async () => {
    const b = await billedBoard(used.store);
    const { projectId, customer } = b;
    const ev = (type: string, sub: string, status: string, created: number) =>
      boardSubscriptionEvent(b, type, sub, status, created, PRICES.monthly);
    const apply = (e: ProviderEvent) => applyEvent(used.store, PRICES, e, projectId, Date.now());
    // Both sessions paid, a minute apart; then the owner cancels the newer one (the duplicate) at once.
    await apply(ev('customer.subscription.created', 's1', 'active', T));
    await apply(ev('customer.subscription.created', 's2', 'active', T + 60_000));
    await apply(ev('customer.subscription.deleted', 's2', 'canceled', T + DAY));

    const subs: SubscriptionState[] = ['s1', 's2'].map((id) => ({
      id,
      customerId: customer,
      status: id === 's1' ? 'active' : 'canceled',
      priceId: PRICES.monthly,
      currentPeriodEnd: T + 30 * DAY,
      cancelAtPeriodEnd: false,
      projectId,
    }));
    const provider = {
      getSubscription: async (id: string) => subs.find((s) => s.id === id)!,
      customerSubscriptions: async () => subs,
    } as unknown as BillingProvider;
    const setup = { provider, prices: PRICES } as BillingSetup;
    // The reconcile pass, and an operator's re-read, with the provider saying s1 is active.
    await reconcilerOn(used.store, setup).pass(T + 2 * DAY);
    await settleFromProvider(used.store, setup, projectId, T + 2 * DAY);

    expect(subs.find((s) => s.id === 's1')!.status).toBe('active'); // still charged every month
    expect((await used.store.billing.get(projectId))!).toMatchObject({ subscriptionId: 's1', status: 'active' });
    expect((await used.store.projects.get(projectId))!.plan).toBe('pro');
  });
});

describe('the delivery that ends the subscription a board follows', () => {
  it('follows the customer’s other subscription still charging at once, and the reconcile pass does when the provider was away', async () => {
    const board = () => billedBoard(used.store);
    const ev = (b: { projectId: string; customer: string }, type: string, sub: string, status: string, at: number) =>
      boardSubscriptionEvent(b, type, sub, status, at, PRICES.monthly);
    const calls: string[] = [];
    let down = false;
    const state = (b: { projectId: string; customer: string }, id: string, status: string): SubscriptionState => ({
      id,
      customerId: b.customer,
      status,
      priceId: PRICES.monthly,
      currentPeriodEnd: T + 30 * DAY,
      cancelAtPeriodEnd: false,
      projectId: b.projectId,
    });
    const boards = new Map<string, { projectId: string; customer: string }>();
    const provider = {
      getSubscription: async (id: string) => {
        calls.push(id);
        if (down) throw new AppError('PROVIDER_UNAVAILABLE');
        const b = [...boards.values()].find((x) => id.startsWith(x.projectId))!;
        return state(b, id, id.endsWith('s1') ? 'active' : 'canceled');
      },
      customerSubscriptions: async (customer: string) => {
        calls.push(customer);
        if (down) throw new AppError('PROVIDER_UNAVAILABLE');
        const b = [...boards.values()].find((x) => x.customer === customer)!;
        return [state(b, `${b.projectId}s2`, 'canceled'), state(b, `${b.projectId}s1`, 'active')];
      },
    } as unknown as BillingProvider;
    const setup = { provider, prices: PRICES } as BillingSetup;
    const billing = new BillingService(used.store, setup, silent, committedAudit(used.store, silent));
    const origin = { requestId: unique('req'), address: '127.0.0.1' };
    const twoThenCancel = async (b: { projectId: string; customer: string }) => {
      boards.set(b.projectId, b);
      const [s1, s2] = [`${b.projectId}s1`, `${b.projectId}s2`];
      await billing.replay(ev(b, 'customer.subscription.created', s1, 'active', T), origin, T);
      await billing.replay(ev(b, 'customer.subscription.created', s2, 'active', T + 60_000), origin, T + 60_000);
      expect((await used.store.billing.get(b.projectId))!.subscriptionId).toBe(s2);
      await billing.replay(ev(b, 'customer.subscription.deleted', s2, 'canceled', T + DAY), origin, T + DAY);
      return s1;
    };

    const a = await board();
    const s1 = await twoThenCancel(a);
    expect(await used.store.billing.get(a.projectId)).toMatchObject({ subscriptionId: s1, status: 'active' });
    expect((await used.store.projects.get(a.projectId))!.plan).toBe('pro');

    // The provider away when the cancel is delivered: the board is Free until the pass re-reads it.
    const b = await board();
    down = true;
    const t1 = await twoThenCancel(b);
    expect((await used.store.projects.get(b.projectId))!.plan).toBe('free');
    down = false;
    calls.length = 0;
    const counts = await reconcilerOn(used.store, setup).pass(T + DAY + 60_000);
    expect(calls).toContain(b.customer);
    expect(counts).toMatchObject({ planChanged: 1 });
    expect(await used.store.billing.get(b.projectId)).toMatchObject({ subscriptionId: t1, status: 'active' });
    expect((await used.store.projects.get(b.projectId))!.plan).toBe('pro');
  });
});
