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
import { settlePlan, subscriptionChanges } from './settle.js';

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
        if (!changes || (current.changedAt !== null && event.created < current.changedAt)) {
          outcome = 'ignored';
          return null;
        }
        outcome = 'applied';
        return {
          ...changes,
          changedAt: event.created,
          appliedEventIds: [...(current.appliedEventIds ?? []), event.id].slice(-APPLIED_IDS_KEPT),
        };
      });
  crashPoint('webhook:after-apply');
  if (record) await settlePlan(store, record, now);
  crashPoint('webhook:after-settle');
  try {
    await store.billingEvents.insert({ _id: event.id, version: 1, projectId, type: event.type, at: now });
  } catch (e) {
    if (!(e instanceof DuplicateKeyError)) throw e;
  }
  crashPoint('webhook:after-log');
  return outcome;
}

/** What an event changes on the record, or null when it changes nothing. */
function effectOf(event: ProviderEvent, record: BillingRecord, prices: Prices | null): Partial<BillingRecord> | null {
  const o = event.object;
  if (event.type === 'checkout.session.completed') {
    return typeof o.subscription === 'string' ? { subscriptionId: o.subscription } : null;
  }
  if (event.type.startsWith('customer.subscription.')) {
    const sub = subscriptionState(o);
    if (!sub)
      throw new AppError('PROVIDER_EVENT_INVALID', 'The subscription in the event lacks its id, customer or status.');
    return subscriptionChanges(
      sub,
      record,
      event.type === 'customer.subscription.deleted' ? 'canceled' : sub.status,
      event.created,
      prices,
    );
  }
  if (event.type === 'invoice.payment_failed')
    return record.status === 'past_due' ? null : { status: 'past_due', pastDueSince: event.created };
  if (event.type === 'invoice.paid')
    return record.status === 'past_due' ? { status: 'active', pastDueSince: null } : null;
  return null;
}
