// Two provider events of one subscription applied at the same time (Stripe delivers them
// concurrently, to any node): the board's plan must end as the billing record says. Each
// applyEvent settles the plan from the record its own write returned; one whose settlement
// runs after a newer event's must not put the older state back.
import { describe, expect, it } from 'vitest';
import { applyEvent } from '../../src/billing/apply-event.js';
import type { ProviderEvent } from '../../src/billing/provider.js';
import type { Store } from '../../store/ports/store.js';
import { billedBoard } from '../support/billing.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const used = useStore();
const PRICES = { monthly: 'pm', yearly: 'py' };
const T = 2_000_000_000;

const board = () => billedBoard(used.store);

const change = (type: string, customer: string, status: string, created: number): ProviderEvent => ({
  id: `evt_${unique('e')}`,
  type: `customer.subscription.${type}`,
  created,
  object: { id: 's1', customer, status, items: { data: [{ price: { id: PRICES.monthly } }] } },
});

/** The store, but the first read of the project (settlePlan's) waits for `gate`: a slow node. */
function slowSettle(store: Store, gate: Promise<void>): Store {
  let held = false;
  const projects = new Proxy(store.projects, {
    get(target, prop, receiver) {
      if (prop === 'get')
        return async (id: string) => {
          if (!held) {
            held = true;
            await gate;
          }
          return target.get(id);
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'projects') return projects;
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

describe('two events of one subscription applied at once', () => {
  it('created (incomplete) and updated (active) of a checkout: the board ends Pro, as its record says', async () => {
    const b = await board();
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    // Node A takes the subscription's creation (incomplete) and is slow to settle the plan.
    const a = applyEvent(
      slowSettle(used.store, gate),
      PRICES,
      change('created', b.customer, 'incomplete', T),
      b.projectId,
      Date.now(),
    );
    // Wait until A's record write landed.
    for (let i = 0; i < 100 && (await used.store.billing.get(b.projectId))!.status !== 'incomplete'; i++)
      await new Promise((r) => setTimeout(r, 5));
    // Node B takes the update to active, a second later, and settles at once.
    expect(
      await applyEvent(used.store, PRICES, change('updated', b.customer, 'active', T + 1000), b.projectId, Date.now()),
    ).toBe('applied');
    expect((await used.store.projects.get(b.projectId))!.plan).toBe('pro');
    open();
    expect(await a).toBe('applied');

    const record = (await used.store.billing.get(b.projectId))!;
    expect(record.status).toBe('active');
    // The board the customer pays for must be Pro (rewind, limits and retention read projects.plan).
    expect((await used.store.projects.get(b.projectId))!.plan).toBe('pro');
  });

  it('updated (active) and deleted: the board ends Free, as its record says', async () => {
    const b = await board();
    await applyEvent(used.store, PRICES, change('created', b.customer, 'active', T - 1000), b.projectId, Date.now());
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const a = applyEvent(
      slowSettle(used.store, gate),
      PRICES,
      change('updated', b.customer, 'active', T),
      b.projectId,
      Date.now(),
    );
    for (let i = 0; i < 100 && (await used.store.billing.get(b.projectId))!.changedAt !== T; i++)
      await new Promise((r) => setTimeout(r, 5));
    await applyEvent(used.store, PRICES, change('deleted', b.customer, 'canceled', T + 1000), b.projectId, Date.now());
    open();
    await a;
    expect((await used.store.billing.get(b.projectId))!.status).toBe('canceled');
    expect((await used.store.projects.get(b.projectId))!.plan).toBe('free');
  });
});
