// A project's plan from its billing record (DOMAIN.md "Billing"), as a table.
import { describe, expect, it } from 'vitest';
import { billingPlan, PAST_DUE_GRACE_MS } from '../../src/billing/plan.js';

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
