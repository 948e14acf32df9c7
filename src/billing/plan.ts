// A project's plan, derived from its billing record (DOMAIN.md "Billing"): Pro while the
// subscription is active or trialing, or past_due for at most 7 days; otherwise Free.
import type { PlanName } from '../plans.js';
import { DAY_MS } from '../plans.js';
import type { BillingRecord } from '../../store/ports/store.js';

export const PAST_DUE_GRACE_MS = 7 * DAY_MS;

export function billingPlan(record: Pick<BillingRecord, 'status' | 'pastDueSince'> | null, now: number): PlanName {
  if (!record?.status) return 'free';
  if (record.status === 'active' || record.status === 'trialing') return 'pro';
  if (record.status === 'past_due') return record.pastDueSince !== null && now - record.pastDueSince <= PAST_DUE_GRACE_MS ? 'pro' : 'free';
  return 'free';
}
