// A provider event applied once: the effect and its id land in one version-checked write, the
// plan is settled from the record on every outcome, and the record keeps a bounded window of ids.
import { describe, expect, it } from 'vitest';
import { APPLIED_IDS_KEPT, applyEvent } from '../../src/billing/apply-event.js';
import type { ProviderEvent } from '../../src/billing/provider.js';
import { billingRecord } from '../support/billing.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const used = useStore();
const PRICES = { monthly: 'pm', yearly: 'py' };

async function board() {
  const projectId = unique('proj');
  const customer = `cus_${unique('c')}`;
  await used.store.projects.insert({
    _id: projectId,
    version: 1,
    name: projectId,
    ownerId: 'acc',
    plan: 'free',
    createdAt: 0,
    lastActivityAt: 0,
  });
  await used.store.billing.insert(billingRecord(projectId, 'acc', { customerId: customer }));
  return { projectId, customer };
}

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
