// The payment-provider port billing routes depend on; errors come back as registry codes.

export interface ProviderEvent {
  id: string;
  type: string;
  /** When the provider created the event (ms): the order of subscription changes. */
  created: number;
  /** The event's object (subscription, checkout session, invoice). */
  object: Record<string, unknown>;
}

/** What we keep of a provider subscription (from an event's object or a fetch). */
export interface SubscriptionState {
  id: string;
  customerId: string;
  status: string;
  priceId: string | null;
  currentPeriodEnd: number | null;
  cancelAtPeriodEnd: boolean;
  /** metadata.projectId, set by our checkout. */
  projectId: string | null;
}

/** Reads a provider subscription object (Stripe's shape; the period end moved onto items in newer API versions). */
export function subscriptionState(object: Record<string, unknown>): SubscriptionState | null {
  const id = object.id;
  const customer =
    typeof object.customer === 'string' ? object.customer : (object.customer as { id?: unknown } | null)?.id;
  if (typeof id !== 'string' || typeof customer !== 'string' || typeof object.status !== 'string') return null;
  const item = ((object.items as { data?: Record<string, unknown>[] } | undefined)?.data ?? [])[0];
  const price = (item?.price as { id?: unknown } | undefined)?.id;
  const periodEnd = object.current_period_end ?? item?.current_period_end;
  const metadata = (object.metadata ?? {}) as Record<string, unknown>;
  return {
    id,
    customerId: customer,
    status: object.status,
    priceId: typeof price === 'string' ? price : null,
    currentPeriodEnd: typeof periodEnd === 'number' ? periodEnd * 1000 : null,
    cancelAtPeriodEnd: object.cancel_at_period_end === true,
    projectId: typeof metadata.projectId === 'string' ? metadata.projectId : null,
  };
}

/** A provider-hosted checkout session just opened. */
export interface CheckoutSession {
  sessionId: string;
  url: string;
}

/** A checkout session as the provider holds it: `open`, `complete` or `expired`. */
export interface CheckoutSessionState {
  status: string;
  /** While open. */
  url: string | null;
  /** The subscription it made, once complete. */
  subscriptionId: string | null;
}

/** A refund the provider made of an invoice's payment. */
export interface Refund {
  refundId: string;
  invoiceId: string;
  /** In the smallest currency unit. */
  amount: number;
  currency: string;
  status: string;
  /** The refunded payment: a payment intent or a charge id. */
  paymentId: string;
}

export interface BillingProvider {
  createCustomer(input: { email: string; accountId: string; projectId: string }): Promise<{ customerId: string }>;
  createCheckoutSession(input: {
    customerId: string;
    priceId: string;
    projectId: string;
    successUrl: string;
    cancelUrl: string;
  }): Promise<CheckoutSession>;
  /**
   * A checkout session as the provider holds it now: `open`, `complete` or `expired`, its URL while
   * open, and the subscription it made once complete.
   */
  getCheckoutSession(sessionId: string): Promise<CheckoutSessionState>;
  /** Expires an open checkout session: it can no longer be paid. */
  expireCheckoutSession(sessionId: string): Promise<void>;
  createPortalSession(input: { customerId: string; returnUrl: string }): Promise<{ url: string }>;
  /** What a price charges: `unitAmount` in the smallest unit of `currency`, null when it is no plain amount (tiered, metered). */
  getPrice(priceId: string): Promise<{ unitAmount: number | null; currency: string }>;
  /** A subscription as the provider holds it now. */
  getSubscription(subscriptionId: string): Promise<SubscriptionState>;
  /** The customer's subscriptions as the provider holds them now, newest first (a few; ended ones included). */
  customerSubscriptions(customerId: string): Promise<SubscriptionState[]>;
  /** Moves the subscription's item to another price, prorated. */
  changePrice(subscriptionId: string, priceId: string): Promise<SubscriptionState>;
  /** Ends the subscription now. */
  cancelSubscription(subscriptionId: string): Promise<void>;
  /** An event as the provider holds it (fetched again by id, for a replay). */
  getEvent(eventId: string): Promise<ProviderEvent>;
  /**
   * Refunds the latest paid invoice of the subscription (all of it, or `amount`); throws
   * BILLING_PAID_INVOICE_REQUIRED when the subscription has none. The idempotency key makes a
   * retried request one refund.
   */
  refundLatestInvoice(input: {
    subscriptionId: string;
    amount: number | null;
    idempotencyKey: string;
    metadata: Record<string, string>;
  }): Promise<Refund>;
  /** Verifies the signature over the exact raw body; throws PROVIDER_SIGNATURE_INVALID or PROVIDER_EVENT_INVALID. */
  verifyEvent(rawBody: Buffer, signature: string | undefined): ProviderEvent;
}

export interface Prices {
  monthly: string;
  yearly: string;
}

/** The configured provider and our two Pro prices; null when billing is not configured here. */
export interface BillingSetup {
  provider: BillingProvider;
  prices: Prices;
}
