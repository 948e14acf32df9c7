// The operators' revenue figures (DOMAIN.md "Operators": GET metrics "monthly revenue from billing
// records", GET costmodel "beside the plan's revenue") must agree for one paying board. A live
// subscription on a price that is not (or no longer) STRIPE_PRICE_MONTHLY/YEARLY, e.g. after the
// prices were changed for new customers, keeps interval null.
import { describe, expect, it } from 'vitest';
import { boardCost } from '../../src/admin/costmodel.js';
import { platformMetrics } from '../../src/admin/platform.js';
import type { BillingRecord } from '../../store/ports/store.js';
import { billingRecord } from '../support/billing.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const used = useStore();
const costs = {
  storedGbMonth: 0,
  millionEvents: 0,
  millionRequests: 0,
  thousandSocketHours: 0,
  proMonthly: 12,
  proYearly: 120,
};

async function paying(over: Partial<BillingRecord>, now: number): Promise<string> {
  const projectId = unique('proj');
  await used.store.projects.insert({
    _id: projectId,
    version: 1,
    name: projectId,
    ownerId: 'acc',
    plan: 'pro',
    createdAt: 0,
    lastActivityAt: 0,
  });
  await used.store.billing.insert(
    billingRecord(projectId, 'acc', { subscriptionId: `sub_${projectId}`, status: 'active', changedAt: now, ...over }),
  );
  return projectId;
}

describe('revenue of a board on a price the service does not name', () => {
  it('is the same in the platform metrics and in the board’s cost model: not guessed, and counted apart', async () => {
    const now = Date.now();
    const before = (await platformMetrics(used.store, { costs }, now, 1)).billing;
    const legacy = await paying({ priceId: 'price_legacy_2024', interval: null }, now);
    const yearly = await paying({ priceId: 'py', interval: 'year' }, now);
    const platform = (await platformMetrics(used.store, { costs }, now, 1)).billing;
    const [unknown, known] = await Promise.all([
      boardCost(used.store, costs, legacy, now),
      boardCost(used.store, costs, yearly, now),
    ]);
    expect(platform.proBoards - before.proBoards).toBe(2);
    // Each paying board is in one interval or counted apart, at an unknown price.
    const counted = (b: typeof platform) =>
      b.subscriptions.month + b.subscriptions.year + b.subscriptions.unknownPrice - b.proBoards;
    expect(counted(platform)).toBe(counted(before));
    expect(platform.subscriptions.unknownPrice - before.subscriptions.unknownPrice).toBe(1);
    // The cost model does not price it at the monthly price either: its revenue is not known.
    expect(unknown.revenue).toMatchObject({ plan: 'pro', interval: null, monthlyUsd: null, monthlyMarginUsd: null });
    expect(known.revenue.monthlyUsd).toBe(10);
    // The platform's revenue is what the cost model says of each board it can tell.
    expect(platform.monthlyRevenueUsd! - before.monthlyRevenueUsd!).toBe(known.revenue.monthlyUsd);
  });
});
