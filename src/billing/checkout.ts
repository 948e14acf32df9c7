// Opening a board's checkout (DOMAIN.md "Billing", Checkout): its provider customer attached first
// when absent, then one open checkout session a board at a time, answered again or replaced.
import { AppError } from '../errors/app-error.js';
import {
  ContentionError,
  DuplicateKeyError,
  MODIFY_ATTEMPTS,
  modify,
  type BillingRecord,
  type Store,
} from '../../store/ports/store.js';
import type { BillingProvider, BillingSetup, CheckoutSessionState } from './provider.js';
import { ENDED, LIVE } from './settle.js';

/**
 * POST /api/account/billing/checkout (after the budget): the customer is created and attached
 * first when absent (a concurrent attach: 409 BILLING_CUSTOMER_CONFLICT, the first one stays),
 * then a subscription checkout session for the project at `interval`. A board has one open
 * session at a time (two paid would make two subscriptions): while the one it records is open at
 * the provider, the same price answers its URL (a closed tab comes back to the same page) and
 * another price expires it first (paid as it was expired: as paid); once it was paid, the
 * subscription it made refuses another checkout until it ended, whatever the record holds of it
 * yet; one the provider no longer knows is as expired. A session opened is recorded only over the
 * one that was read (a version-checked write); one that lost to another request's (another node's)
 * is expired, never answered, and the round starts again from the record.
 */
export async function openCheckout(
  store: Pick<Store, 'billing'>,
  setup: BillingSetup,
  projectId: string,
  owner: { id: string; email: string },
  interval: 'month' | 'year',
  returnUrl: string,
): Promise<{ url: string }> {
  const { provider, prices } = setup;
  const priceId = interval === 'month' ? prices.monthly : prices.yearly;
  for (let attempt = 0; attempt < MODIFY_ATTEMPTS; attempt++) {
    let record = await store.billing.get(projectId);
    if (record?.status && LIVE.has(record.status))
      throw new AppError(
        'BILLING_SUBSCRIPTION_CONFLICT',
        'This board already has a live subscription; manage it in the portal.',
      );
    record ??= await attachCustomer(store, provider, projectId, owner);
    const held = record.checkout ?? null;
    if (held) {
      const session = await sessionState(provider, held.sessionId);
      if (session.status === 'open' && held.priceId === priceId && session.url) return { url: session.url };
      // Paid as it was being expired: the provider refused, and it is as paid as one read so.
      const closed = session.status === 'open' ? await expireSession(provider, held.sessionId) : session;
      if (closed?.status === 'complete') await refusePaid(provider, closed.subscriptionId);
    }
    const opened = await provider.createCheckoutSession({
      customerId: record.customerId,
      priceId,
      projectId,
      successUrl: `${returnUrl}?checkout=success`,
      cancelUrl: `${returnUrl}?checkout=cancelled`,
    });
    const kept = await modify(store.billing, projectId, (current) =>
      (current.checkout?.sessionId ?? null) === (held?.sessionId ?? null)
        ? { checkout: { sessionId: opened.sessionId, priceId } }
        : null,
    );
    if (kept?.checkout?.sessionId === opened.sessionId) return { url: opened.url };
    await expireSession(provider, opened.sessionId);
  }
  throw new ContentionError('billing', projectId);
}

/**
 * The board's last session was paid, and the record does not hold the subscription it made as live
 * (its deliveries still on their way, or lost; or the record names it but as it was created,
 * `incomplete`, before the delivery that it is active): unless that subscription has ended at the
 * provider, a new checkout would make a second one, so it is refused as a live subscription is.
 */
async function refusePaid(provider: BillingProvider, subscriptionId: string | null): Promise<void> {
  if (!subscriptionId) return;
  if (ENDED.has((await provider.getSubscription(subscriptionId)).status)) return;
  throw new AppError(
    'BILLING_SUBSCRIPTION_CONFLICT',
    'This board’s last checkout was paid and its subscription is being set up; manage it in the portal.',
  );
}

async function attachCustomer(
  store: Pick<Store, 'billing'>,
  provider: BillingProvider,
  projectId: string,
  owner: { id: string; email: string },
): Promise<BillingRecord> {
  const { customerId } = await provider.createCustomer({ email: owner.email, accountId: owner.id, projectId });
  const record: BillingRecord = {
    _id: projectId,
    version: 1,
    accountId: owner.id,
    customerId,
    subscriptionId: null,
    status: null,
    interval: null,
    priceId: null,
    currentPeriodEnd: null,
    cancelAtPeriodEnd: false,
    changedAt: null,
    pastDueSince: null,
  };
  try {
    await store.billing.insert(record);
  } catch (e) {
    if (e instanceof DuplicateKeyError)
      throw new AppError(
        'BILLING_CUSTOMER_CONFLICT',
        'Another request attached a provider customer to this board meanwhile; retry.',
      );
    throw e;
  }
  return record;
}

/** A session the provider does not know (its keys changed, or it was never theirs): nobody can pay it. */
const UNKNOWN_SESSION: CheckoutSessionState = { status: 'expired', url: null, subscriptionId: null };

/** Whether the provider refused because it holds no such object (Stripe's 404 resource_missing). */
const unknownToProvider = (e: unknown): boolean =>
  e instanceof AppError && e.code === 'PROVIDER_REQUEST_FAILED' && e.details?.providerCode === 'resource_missing';

/** A checkout session as the provider holds it; one it does not know is answered as expired. */
async function sessionState(provider: BillingProvider, sessionId: string): Promise<CheckoutSessionState> {
  try {
    return await provider.getCheckoutSession(sessionId);
  } catch (e) {
    if (unknownToProvider(e)) return UNKNOWN_SESSION;
    throw e;
  }
}

/**
 * Expires an open checkout session. One no longer open (another request expired it, or it was
 * paid or lapsed meanwhile) is refused by the provider: that refusal is no failure here, and the
 * session is answered as the provider then holds it (paid: `complete`, with its subscription).
 * One the provider does not know is answered as expired: it cannot be paid. Answers null when
 * this expired it.
 */
export async function expireSession(
  provider: BillingProvider,
  sessionId: string,
): Promise<CheckoutSessionState | null> {
  try {
    await provider.expireCheckoutSession(sessionId);
    return null;
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== 'PROVIDER_REQUEST_FAILED') throw e;
    const session = await sessionState(provider, sessionId);
    if (session.status === 'open') throw e;
    return session;
  }
}
