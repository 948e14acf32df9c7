// Settling a board from billing: a billing record from a provider subscription, and the board's
// plan from its record. The webhook, the reconcile pass and the operators' re-read all land
// through here, so a subscription read from the provider settles exactly as its event would.
import { AppError } from '../errors/app-error.js';
import type { PlanName } from '../plans.js';
import {
  ContentionError,
  MODIFY_ATTEMPTS,
  modify,
  type BillingRecord,
  type ProjectRecord,
  type Store,
} from '../../store/ports/store.js';
import { billingPlan, boardPlan } from './plan.js';
import type { BillingSetup, Prices, SubscriptionState } from './provider.js';

/** Statuses under which a subscription is live: a second one is refused, account deletion cancels them. */
export const LIVE = new Set(['active', 'trialing']);
/** Statuses a subscription never leaves: the board's record then follows another one of its customer's, if any charges. */
export const ENDED = new Set(['canceled', 'incomplete_expired']);

/** Whether the record's subscription ended and the provider was not asked since (another of the customer's may charge). */
export const endedUnread = (record: Pick<BillingRecord, 'status' | 'changedAt' | 'reconciledAt'>): boolean =>
  !!record.status && ENDED.has(record.status) && (record.reconciledAt ?? 0) < (record.changedAt ?? 0);

/** Whether a subscription at `status` still charges: live, or past_due (its payment being retried). */
export const charges = (status: string | null): boolean => !!status && (LIVE.has(status) || status === 'past_due');

export function intervalOf(prices: Prices | null, priceId: string | null): 'month' | 'year' | null {
  if (!prices || !priceId) return null;
  return priceId === prices.monthly ? 'month' : priceId === prices.yearly ? 'year' : null;
}

/** The record's fields as `sub` (with `status`) sets them; `at` starts an overdue period that has none yet. */
export function subscriptionChanges(
  sub: SubscriptionState,
  record: BillingRecord,
  status: string,
  at: number,
  prices: Prices | null,
): Partial<BillingRecord> {
  return {
    subscriptionId: sub.id,
    status,
    priceId: sub.priceId,
    interval: intervalOf(prices, sub.priceId),
    currentPeriodEnd: sub.currentPeriodEnd,
    cancelAtPeriodEnd: sub.cancelAtPeriodEnd,
    // Overdue since the first unpaid invoice: unpaid keeps it too (the operators' dunning list counts days from it).
    pastDueSince: status === 'past_due' || status === 'unpaid' ? (record.pastDueSince ?? at) : null,
  };
}

/** What settling a board's plan did: its plan before and after, and what its billing alone says. */
export interface PlanSettled {
  before: PlanName;
  after: PlanName;
  billing: PlanName;
}

/** A complimentary plan set or cleared with the settlement (null: the project's stays). */
export type CompChange = (project: ProjectRecord) => Pick<ProjectRecord, 'compPlan' | 'compUntil'> | null;

/**
 * Keeps the project's plan (read by selection, limits and retention) equal to what its billing
 * (and a complimentary plan in force) derives, with `comp`'s change of that plan in the same write.
 * Idempotent: it writes only when they differ. The plan follows the billing record as it is now,
 * not a copy a caller holds: the record is read before each attempt, and read again after the
 * project's write; if it moved meanwhile (another node applied an event and may have settled
 * before this write landed), the plan is worked out again. So whichever settlement writes last
 * wrote from the record's newest version. Answers null when there is no such project.
 */
export async function settlePlan(
  store: Store,
  projectId: string,
  now: number,
  comp?: CompChange,
): Promise<PlanSettled | null> {
  for (let attempt = 0; attempt < MODIFY_ATTEMPTS; attempt++) {
    const record = await store.billing.get(projectId);
    let before: PlanName | null = null;
    const project = await modify(store.projects, projectId, (current) => {
      before = current.plan;
      const changes = comp?.(current) ?? null;
      const plan = boardPlan({ ...current, ...changes }, record, now);
      return current.plan === plan && !changes ? null : { ...changes, plan };
    });
    if (!project || !before) return null;
    const again = await store.billing.get(projectId);
    if ((again?.version ?? null) === (record?.version ?? null))
      return { before, after: project.plan, billing: billingPlan(record, now) };
  }
  throw new ContentionError('billing', projectId);
}

/** What one settlement from the provider did. */
export interface Settled {
  before: BillingRecord;
  after: BillingRecord;
  /** Whether this settlement changed the record's subscription fields (reconciledAt aside). */
  changed: boolean;
  plan: PlanSettled | null;
  /** Provider calls it made: two when the subscription followed had ended and the customer's were listed. */
  calls: number;
}

/** Of a customer's subscriptions (newest first), the one of this board: a live one first. */
function pick(subs: SubscriptionState[], projectId: string): SubscriptionState | null {
  const ours = subs.filter((s) => s.projectId === null || s.projectId === projectId);
  return ours.find((s) => charges(s.status)) ?? ours[0] ?? null;
}

const SUBSCRIPTION_FIELDS = [
  'subscriptionId',
  'status',
  'priceId',
  'interval',
  'currentPeriodEnd',
  'cancelAtPeriodEnd',
  'pastDueSince',
] as const;

/**
 * Re-reads the board's subscription from the provider (by its id, or among its customer's when
 * no event named it yet, or when the one it names has ended: two checkouts completed before
 * either was paid leave two, and the record follows one; when that one ends the other may still
 * be charging; not for a board that no longer exists) and settles the record, then the board's
 * plan, from the answer. `now` is taken before the provider is asked: the answer is at least as
 * new as every event created before it, so changedAt moves to it and an older event delivered
 * later does not overwrite it; an event applied meanwhile with a later time is newer than the
 * answer and is kept, and so is a subscription named meanwhile (only the re-read's time is
 * written then).
 * Throws BILLING_SUBSCRIPTION_REQUIRED (no record, or the provider holds no subscription for it)
 * or BILLING_CUSTOMER_CONFLICT (the subscription belongs to another customer or board), writing
 * nothing; provider failures come back as their codes, writing nothing.
 */
export async function settleFromProvider(
  store: Store,
  setup: BillingSetup,
  projectId: string,
  now: number,
): Promise<Settled> {
  const before = await store.billing.get(projectId);
  if (!before) throw new AppError('BILLING_SUBSCRIPTION_REQUIRED', 'This board has no billing record to re-read.');
  let sub = before.subscriptionId ? await setup.provider.getSubscription(before.subscriptionId) : null;
  let calls = before.subscriptionId ? 1 : 0;
  // A board deleted meanwhile is followed onto no other subscription (its deletion ended them all).
  if ((!sub || ENDED.has(sub.status)) && (await store.projects.get(projectId))) {
    const found = pick(await setup.provider.customerSubscriptions(before.customerId), projectId);
    calls++;
    if (!sub || (found && charges(found.status))) sub = found;
  }
  if (!sub) throw new AppError('BILLING_SUBSCRIPTION_REQUIRED', 'The provider holds no subscription for this board.');
  if (sub.customerId !== before.customerId || (sub.projectId !== null && sub.projectId !== projectId)) {
    throw new AppError(
      'BILLING_CUSTOMER_CONFLICT',
      'The provider holds this subscription under another customer or board than the one attached here; reconcile the billing record by hand.',
    );
  }
  let base = before;
  const after = await modify(store.billing, projectId, (current) => {
    base = current;
    // Another subscription named meanwhile (a checkout or its events while the provider answered): the answer is not its.
    if (current.subscriptionId !== before.subscriptionId) return { reconciledAt: now };
    if (current.changedAt !== null && current.changedAt > now) return { reconciledAt: now };
    return {
      ...subscriptionChanges(sub, current, sub.status, now, setup.prices),
      // In whole seconds, as the provider stamps its events: one stamped in this second, delivered
      // after, is ordered against the answer by its stage, not taken as older.
      changedAt: Math.max(current.changedAt ?? 0, Math.floor(now / 1000) * 1000),
      reconciledAt: now,
    };
  });
  if (!after)
    throw new AppError('BILLING_SUBSCRIPTION_REQUIRED', 'The billing record of this board was removed meanwhile.');
  const changed = SUBSCRIPTION_FIELDS.some((f) => base[f] !== after[f]);
  return { before, after, changed, plan: await settlePlan(store, projectId, now), calls };
}

/** Marks the record as settled from the provider at `now` without changing what it says (a refusal the pass will not repeat every time). */
export async function markReconciled(store: Store, projectId: string, now: number): Promise<void> {
  await modify(store.billing, projectId, () => ({ reconciledAt: now }));
}
