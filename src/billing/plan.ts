// A project's plan (DOMAIN.md "Billing"): from its billing record, Pro while the subscription is
// active or trialing, or past_due for at most 7 days; otherwise Free. A complimentary plan an
// operator granted (DOMAIN.md "Operators", Money) lifts it to Pro until its end, then billing's
// plan holds again. And what the record brings in a month, for the operators' figures.
import type { PlanName } from '../plans.js';
import { DAY_MS } from '../plans.js';
import type { BillingRecord, ProjectRecord } from '../../store/ports/store.js';

export const PAST_DUE_GRACE_MS = 7 * DAY_MS;

export function billingPlan(record: Pick<BillingRecord, 'status' | 'pastDueSince'> | null, now: number): PlanName {
  if (!record?.status) return 'free';
  if (record.status === 'active' || record.status === 'trialing') return 'pro';
  const graceEnds = graceEndsAt(record);
  return graceEnds !== null && now <= graceEnds ? 'pro' : 'free';
}

/**
 * When a past_due subscription's grace ends: billing's plan is Free after this instant unless a
 * payment goes through first. Null for any other status (or a past_due record with no start).
 */
export function graceEndsAt(record: Pick<BillingRecord, 'status' | 'pastDueSince'> | null): number | null {
  return record?.status === 'past_due' && record.pastDueSince !== null ? record.pastDueSince + PAST_DUE_GRACE_MS : null;
}

/** The configured Pro prices in US dollars (REVENUE_PRO_*_USD); null when unset. */
export interface ProPrices {
  proMonthly: number | null;
  proYearly: number | null;
}

/**
 * What a billing record brings in a month: 0 when billing's plan is not Pro; a yearly one's price
 * spread over twelve months. Null when it cannot be told: a price the service does not name
 * (interval null: an old price, say, never guessed to be the monthly one), or that interval's
 * price not configured.
 */
export function monthlyRevenue(
  record: Pick<BillingRecord, 'status' | 'pastDueSince' | 'interval'> | null,
  prices: ProPrices,
  now: number,
): number | null {
  if (!record || billingPlan(record, now) !== 'pro') return 0;
  if (record.interval === 'month') return prices.proMonthly;
  if (record.interval === 'year') return prices.proYearly === null ? null : prices.proYearly / 12;
  return null;
}

/** The complimentary plan in force at `now`, or null (none granted, or ended). */
export function complimentaryPlan(
  project: Pick<ProjectRecord, 'compPlan' | 'compUntil'>,
  now: number,
): PlanName | null {
  return project.compPlan && typeof project.compUntil === 'number' && now < project.compUntil ? project.compPlan : null;
}

/** The board's plan: billing's, lifted by a complimentary plan while it lasts. */
export function boardPlan(
  project: Pick<ProjectRecord, 'compPlan' | 'compUntil'>,
  record: Pick<BillingRecord, 'status' | 'pastDueSince'> | null,
  now: number,
): PlanName {
  return complimentaryPlan(project, now) === 'pro' ? 'pro' : billingPlan(record, now);
}
