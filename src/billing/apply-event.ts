// One provider event applied to its board's billing, once per event id, safe against a crash
// between any two of its writes.
//
// Why one write: the effect on the billing record and the event's idempotence mark (its id in
// the record's appliedEventIds) land in the same version-checked update. Marking first (as this
// did before) let a crash between the mark and the effect turn the provider's redelivery into a
// "duplicate" while the board stayed Free; marking last would apply an effect twice after a crash.
// With one write there is no state in between. What follows it is derived and idempotent: the
// board's plan is settled from the record on every outcome, duplicates included, so a crash
// before it is healed by the redelivery (or the reconcile pass, src/billing/reconcile.ts); the
// provider-events log (billingEvents: export, and ids older than the record's window) is
// written last and tolerates being written again.
import { AppError } from '../errors/app-error.js';
import { DuplicateKeyError, modify, type BillingRecord, type Store } from '../../store/ports/store.js';
import { crashPoint } from './crash-point.js';
import { subscriptionState, type Prices, type ProviderEvent } from './provider.js';
import { LIVE, settlePlan, subscriptionChanges } from './settle.js';

export type AppliedOutcome = 'applied' | 'duplicate' | 'ignored';

/**
 * Event ids a billing record keeps. A redelivery of an event older than these is still never
 * applied twice: it is in the log, and it is older than the record's last change.
 */
export const APPLIED_IDS_KEPT = 50;

/**
 * Applies `event` to the project's billing record unless it was applied before; an event older
 * than the record's last applied change is ignored. Then settles the board's plan and logs the id.
 */
export async function applyEvent(
  store: Store,
  prices: Prices | null,
  event: ProviderEvent,
  projectId: string,
  now: number,
): Promise<AppliedOutcome> {
  const logged = (await store.billingEvents.versionOf(event.id)) !== null;
  let outcome: AppliedOutcome = logged ? 'duplicate' : 'ignored';
  const record = logged
    ? await store.billing.get(projectId)
    : await modify(store.billing, projectId, (current) => {
        if (current.appliedEventIds?.includes(event.id)) {
          outcome = 'duplicate';
          return null;
        }
        const changes = effectOf(event, current, prices);
        if (!changes || older(event, changes, current)) {
          outcome = 'ignored';
          return null;
        }
        outcome = 'applied';
        return {
          ...changes,
          // A checkout says nothing of a subscription's state: the order stays its changes' (none yet
          // for one it names anew, so the new one's changes are ordered among themselves).
          changedAt:
            event.type !== 'checkout.session.completed'
              ? event.created
              : changes.subscriptionId === current.subscriptionId
                ? current.changedAt
                : null,
          appliedEventIds: [...(current.appliedEventIds ?? []), event.id].slice(-APPLIED_IDS_KEPT),
        };
      });
  crashPoint('webhook:after-apply');
  if (record) await settlePlan(store, projectId, now);
  crashPoint('webhook:after-settle');
  try {
    await store.billingEvents.insert({ _id: event.id, version: 1, projectId, type: event.type, at: now });
  } catch (e) {
    if (!(e instanceof DuplicateKeyError)) throw e;
  }
  crashPoint('webhook:after-log');
  return outcome;
}

/**
 * How far along its life a subscription is at a status: not yet paid for, running (whatever its
 * payments), ended. The provider stamps events in whole seconds, and two changes of one
 * subscription often share one (created `incomplete`, then updated `active`; updated, then
 * deleted): of two in the same second, one of an earlier stage does not undo a later one. Within
 * a stage (past_due and active again after a retry, say) the one delivered last stands.
 */
const STAGE: Record<string, number> = { incomplete: 0, canceled: 2, incomplete_expired: 2 };
const stageOf = (status: string | null | undefined): number => (status ? (STAGE[status] ?? 1) : 0);
/**
 * What a status is worth to its board: Pro, Pro for a while, or not. The record follows one
 * subscription; an event about another replaces it when that one is worth more (a new subscription
 * after a lapsed one), or as much and newer, never with one worth less (the old one's end after a
 * new one).
 */
const WORTH: Record<string, number> = { active: 3, trialing: 3, past_due: 2, incomplete: 1, unpaid: 1, paused: 1 };
const worthOf = (status: string | null): number => (status === null ? 0 : (WORTH[status] ?? 0));

/**
 * Whether `event` comes before the record's last applied change of the same subscription: an
 * earlier second, or, for a subscription's own change in the same second, an earlier stage. A
 * change of another subscription is not ordered against this one's (worthOf decides it).
 */
function older(event: ProviderEvent, changes: Partial<BillingRecord>, record: BillingRecord): boolean {
  if (record.changedAt === null) return false;
  if (changes.subscriptionId !== undefined && changes.subscriptionId !== record.subscriptionId) return false;
  if (event.created !== record.changedAt) return event.created < record.changedAt;
  if (!event.type.startsWith('customer.subscription.') || changes.status === undefined) return false;
  return stageOf(changes.status) < stageOf(record.status);
}

/** The subscription an invoice is for (where the provider's API versions put it), or null when it names none. */
function invoiceSubscription(invoice: Record<string, unknown>): string | null {
  if (typeof invoice.subscription === 'string') return invoice.subscription;
  const details = (invoice.parent as { subscription_details?: { subscription?: unknown } } | null | undefined)
    ?.subscription_details;
  return typeof details?.subscription === 'string' ? details.subscription : null;
}

/** What an event changes on the record, or null when it changes nothing. */
function effectOf(event: ProviderEvent, record: BillingRecord, prices: Prices | null): Partial<BillingRecord> | null {
  const o = event.object;
  if (event.type === 'checkout.session.completed') {
    // Names the board's subscription when it has none or its own has ended (so a re-read finds the
    // new one). Beside one still worth something, the new one takes the place by its own events (worthOf).
    if (typeof o.subscription !== 'string') return null;
    return record.subscriptionId === null || record.subscriptionId === o.subscription || worthOf(record.status) === 0
      ? { subscriptionId: o.subscription }
      : null;
  }
  if (event.type.startsWith('customer.subscription.')) {
    const sub = subscriptionState(o);
    if (!sub)
      throw new AppError('PROVIDER_EVENT_INVALID', 'The subscription in the event lacks its id, customer or status.');
    const status = event.type === 'customer.subscription.deleted' ? 'canceled' : sub.status;
    // Another subscription than the record's takes its place if worth more to the board, or as
    // much and newer than the record's last change (not a late event of one replaced before).
    if (record.subscriptionId !== null && sub.id !== record.subscriptionId) {
      const [theirs, ours] = [worthOf(status), worthOf(record.status)];
      if (theirs < ours || (theirs === ours && record.changedAt !== null && event.created <= record.changedAt))
        return null;
    }
    return subscriptionChanges(sub, record, status, event.created, prices);
  }
  if (event.type === 'invoice.payment_failed' || event.type === 'invoice.paid') {
    // An invoice of another subscription, or of none (a one-off), says nothing of the record's.
    if (record.subscriptionId === null || invoiceSubscription(o) !== record.subscriptionId) return null;
    // Overdue only from a live subscription (a canceled one stays canceled), and paid only from overdue.
    if (event.type === 'invoice.payment_failed')
      return LIVE.has(record.status ?? '') ? { status: 'past_due', pastDueSince: event.created } : null;
    return record.status === 'past_due' ? { status: 'active', pastDueSince: null } : null;
  }
  return null;
}
