// A project's plan from its billing record (DOMAIN.md "Billing"), and what it brings in a month, as tables.
import { describe, expect, it } from 'vitest';
import { billingPlan, monthlyRevenue, PAST_DUE_GRACE_MS } from '../../src/billing/plan.js';

const NOW = Date.UTC(2026, 10, 22);

describe('billingPlan', () => {
  it.each([
    [null, 'free'],
    [{ status: null, pastDueSince: null }, 'free'],
    [{ status: 'active', pastDueSince: null }, 'pro'],
    [{ status: 'trialing', pastDueSince: null }, 'pro'],
    [{ status: 'past_due', pastDueSince: NOW - 1000 }, 'pro'],
    [{ status: 'past_due', pastDueSince: NOW - PAST_DUE_GRACE_MS }, 'pro'],
    [{ status: 'past_due', pastDueSince: NOW - PAST_DUE_GRACE_MS - 1 }, 'free'],
    [{ status: 'past_due', pastDueSince: null }, 'free'],
    [{ status: 'canceled', pastDueSince: null }, 'free'],
    [{ status: 'incomplete', pastDueSince: null }, 'free'],
    [{ status: 'unpaid', pastDueSince: null }, 'free'],
  ] as const)('%o is %s', (record, plan) => {
    expect(billingPlan(record, NOW)).toBe(plan);
  });
});

describe('monthlyRevenue', () => {
  const prices = { proMonthly: 12, proYearly: 120 };
  const live = { status: 'active', pastDueSince: null };
  it.each([
    [null, prices, 0],
    [{ status: 'canceled', pastDueSince: null, interval: 'month' }, prices, 0],
    [{ ...live, interval: 'month' }, prices, 12],
    [{ ...live, interval: 'year' }, prices, 10],
    [{ ...live, interval: null }, prices, null], // a price the service does not name: not guessed
    [{ ...live, interval: 'year' }, { proMonthly: 12, proYearly: null }, null],
  ] as const)('%o at %o is %s', (record, at, usd) => {
    expect(monthlyRevenue(record, at, NOW)).toBe(usd);
  });
});
