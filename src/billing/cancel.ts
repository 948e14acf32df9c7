// Ending the subscriptions nobody could reach any more: a board's before it is deleted, an
// account's before it is deleted, and a deleted board's that a late delivery names (a checkout
// paid after the deletion). Once the board is gone the portal answers 403, so nothing else would.
import { AppError } from '../errors/app-error.js';
import { auditRow, type RequestOrigin } from '../audit-row.js';
import { modify, type AuditRecord, type BillingRecord, type Store } from '../../store/ports/store.js';
import { expireSession } from './checkout.js';
import type { BillingSetup } from './provider.js';
import { charges, settlePlan } from './settle.js';

/** Whether the record's subscription still charges. */
const charging = (r: BillingRecord): boolean => !!r.subscriptionId && charges(r.status);

/**
 * The subscriptions an account pays for, before it is deleted. Its boards are found by
 * projects.ownerId, the one record of who owns a board (a billing record's accountId may still
 * name a previous owner); records that name it and whose board is gone (deleted before it, its
 * subscription not ended) are its too.
 */
export async function accountRecords(
  store: Pick<Store, 'projects' | 'billing'>,
  accountId: string,
): Promise<(BillingRecord | null)[]> {
  const [owned, named] = await Promise.all([
    store.projects.select({ ownerId: accountId }, ['plan']),
    store.billing.find({ accountId }),
  ]);
  const ofBoards = await Promise.all(owned.map((p) => store.billing.get(p._id)));
  const ownedIds = new Set(owned.map((p) => p._id));
  const orphaned = await Promise.all(
    named
      .filter((r) => !ownedIds.has(r._id) && charging(r))
      .map(async (r) => ((await store.projects.get(r._id)) ? null : r)),
  );
  return [...ofBoards, ...orphaned];
}

/**
 * Expires the checkout session each of `records` holds (one still open could be paid after), then
 * ends the charging subscriptions of `records` at the provider, each then written canceled on
 * its record (the provider's event says the same later; one already older than this is ignored)
 * and its board's plan settled. A record follows one subscription, but two checkouts completed
 * before either was paid leave two: so for a record that ever named one (with `unnamed`, for every
 * record: a board gone, whose checkout paid after may have made one no delivery named), the
 * customer's are listed and every charging one of this board (or of none) is ended too. Nothing
 * is cancelled when billing is not configured here (a charging record then refuses). `cancelled`
 * runs right after each cancellation, before the next is asked (one that fails after it leaves it
 * done).
 */
export async function cancelSubscriptions(
  store: Store,
  setup: BillingSetup | null,
  records: (BillingRecord | null)[],
  now: number,
  cancelled: (subscriptionId: string) => Promise<void> = async () => {},
  unnamed = false,
): Promise<void> {
  const listed = records.filter((r): r is BillingRecord => !!r && (unnamed || !!r.subscriptionId));
  if (!setup) {
    if (listed.some(charging))
      throw new AppError(
        'PROVIDER_UNAVAILABLE',
        'There are live subscriptions and the payment provider is not configured here to cancel them.',
      );
    return;
  }
  const { provider } = setup;
  // A session still open could be paid once the board is gone: expired first, so that one paid
  // just before is among the customer's subscriptions listed below.
  for (const record of records) {
    const held = record?.checkout;
    if (!held) continue;
    await expireSession(provider, held.sessionId);
    await modify(store.billing, record._id, (current) =>
      current.checkout?.sessionId === held.sessionId ? { checkout: null } : null,
    );
  }
  for (const record of listed) {
    const subs = await provider.customerSubscriptions(record.customerId);
    const ids = subs
      .filter((s) => (s.projectId === null || s.projectId === record._id) && charges(s.status))
      .map((s) => s.id);
    // One the provider did not list (beyond its page) is taken from the record; one it listed as
    // ended is not cancelled again (the provider refuses that), its event not delivered yet.
    if (charging(record) && !subs.some((s) => s.id === record.subscriptionId)) ids.push(record.subscriptionId!);
    for (const id of ids) {
      await provider.cancelSubscription(id);
      await cancelled(id);
    }
    if (!charging(record)) continue;
    await modify(store.billing, record._id, (current) =>
      current.subscriptionId === record.subscriptionId && charging(current)
        ? {
            status: 'canceled',
            pastDueSince: null,
            cancelAtPeriodEnd: false,
            changedAt: Math.max(current.changedAt ?? 0, Math.floor(now / 1000) * 1000),
          }
        : null,
    );
    await settlePlan(store, record._id, now);
  }
}

/**
 * After a delivery about a board deleted meanwhile (a checkout paid after its board was deleted,
 * or that subscription's own events), or when the reconcile pass finds the board gone (such a
 * checkout whose deliveries never came): every one of the board's subscriptions still charging is
 * cancelled at the provider now, its customer's listed whatever the record names, each with an
 * audit row written as soon as it is (a failure on the next one leaves it audited; its id is the
 * subscription's, so a redelivery, the pass or another node writes one row). The board is not
 * recreated (its plan is settled only while it exists). A provider that cannot cancel fails the
 * delivery, so it is delivered again and this tried again. Answers the subscriptions cancelled.
 */
export async function endOrphaned(
  store: Store,
  setup: BillingSetup | null,
  projectId: string,
  origin: RequestOrigin | null,
  now: number,
  audit: (row: AuditRecord) => Promise<void>,
): Promise<string[]> {
  if (await store.projects.get(projectId)) return [];
  const ended: string[] = [];
  const cancelled = async (subscriptionId: string) => {
    ended.push(subscriptionId);
    await audit(
      auditRow({
        id: `${projectId}:billing.subscription.cancel:${subscriptionId}`,
        at: now,
        actor: 'system:billing',
        action: 'billing.subscription.cancel',
        projectId,
        origin,
        target: `subscription:${subscriptionId}`,
        data: { subscriptionId, reason: 'board-deleted' },
      }),
    );
  };
  await cancelSubscriptions(store, setup, [await store.billing.get(projectId)], now, cancelled, true);
  return ended;
}
