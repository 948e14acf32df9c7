// A board past_due beyond its 7-day grace turns Free at the next sweep, with no provider event;
// the billing read names the moment it will.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { committedAudit } from '../../src/board/committed-audit.js';
import { BillingService } from '../../src/billing/service.js';
import { PAST_DUE_GRACE_MS } from '../../src/billing/plan.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { billingRecord } from '../support/billing.js';

const silent = pino({ level: 'silent' });

const used = useStore();
const NOW = Date.UTC(2026, 10, 22);

/** A Pro board whose billing record has `status`, past due since `pastDueSince`. */
async function board(status: string, pastDueSince: number | null): Promise<string> {
  const id = unique('proj');
  await used.store.projects.insert({
    _id: id,
    version: 1,
    name: id,
    ownerId: 'acc',
    plan: 'pro',
    createdAt: NOW,
    lastActivityAt: NOW,
  });
  await used.store.billing.insert(
    billingRecord(id, 'acc', { subscriptionId: 'sub', status, interval: 'month', priceId: 'p', pastDueSince }),
  );
  return id;
}

describe('the past_due sweep', () => {
  it('turns Free the boards whose grace ran out, and only those', async () => {
    const { store } = used;
    const lapsed = await board('past_due', NOW - PAST_DUE_GRACE_MS - 1);
    const inGrace = await board('past_due', NOW - 1000);
    const active = await board('active', null);
    const billing = new BillingService(store, null, silent, committedAudit(store, silent));
    expect(await billing.settleLapsedGrace(NOW)).toBe(1);
    expect((await store.projects.get(lapsed))!.plan).toBe('free');
    expect((await store.projects.get(inGrace))!.plan).toBe('pro');
    expect((await store.projects.get(active))!.plan).toBe('pro');
  });

  it('answers, for a past_due board, when its grace ends and it turns Free; null for any other', async () => {
    const { store } = used;
    const since = NOW - 2 * 86_400_000;
    const billing = new BillingService(store, null, silent, committedAudit(store, silent));
    const overdue = await billing.state(await board('past_due', since), NOW);
    expect(overdue.plan).toBe('pro');
    expect(overdue.subscription?.graceEndsAt).toBe(new Date(since + PAST_DUE_GRACE_MS).toISOString());
    expect((await billing.state(await board('active', null), NOW)).subscription?.graceEndsAt).toBeNull();
  });
});
