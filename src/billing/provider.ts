// The payment-provider port billing routes depend on; errors come back as registry codes.

export interface ProviderEvent {
  id: string;
  type: string;
  /** The event's object (subscription, checkout session, invoice). */
  object: Record<string, unknown>;
}

export interface BillingProvider {
  createCustomer(input: { email: string; accountId: string; projectId: string }): Promise<{ customerId: string }>;
  createCheckoutSession(input: { customerId: string; priceId: string; projectId: string; successUrl: string; cancelUrl: string }): Promise<{ url: string }>;
  createPortalSession(input: { customerId: string; returnUrl: string }): Promise<{ url: string }>;
  /** Verifies the signature over the exact raw body; throws PROVIDER_SIGNATURE_INVALID or PROVIDER_EVENT_INVALID. */
  verifyEvent(rawBody: Buffer, signature: string | undefined): ProviderEvent;
}
