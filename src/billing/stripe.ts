// The Stripe adapter: the SDK behind the BillingProvider port, its failures mapped to our codes.
import Stripe from 'stripe';
import { AppError } from '../errors/app-error.js';
import { subscriptionState, type BillingProvider, type ProviderEvent } from './provider.js';

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string | undefined;
  /** For tests and stripe-mock: e.g. http://127.0.0.1:12111 */
  apiBase?: string;
}

export function createStripeProvider(settings: StripeSettings): BillingProvider {
  const base = settings.apiBase ? new URL(settings.apiBase) : null;
  const stripe = new Stripe(settings.secretKey, {
    maxNetworkRetries: 1,
    timeout: 10_000,
    ...(base
      ? {
          host: base.hostname,
          port: Number(base.port || (base.protocol === 'https:' ? 443 : 80)),
          protocol: base.protocol.replace(':', '') as 'http' | 'https',
        }
      : {}),
  });

  return {
    async createCustomer({ email, accountId, projectId }) {
      const customer = await call(() => stripe.customers.create({ email, metadata: { accountId, projectId } }));
      return { customerId: requireString(customer.id) };
    },
    async createCheckoutSession({ customerId, priceId, projectId, successUrl, cancelUrl }) {
      const session = await call(() =>
        stripe.checkout.sessions.create({
          mode: 'subscription',
          customer: customerId,
          line_items: [{ price: priceId, quantity: 1 }],
          client_reference_id: projectId,
          subscription_data: { metadata: { projectId } },
          success_url: successUrl,
          cancel_url: cancelUrl,
        }),
      );
      return { sessionId: requireString(session.id), url: requireString(session.url) };
    },
    async getCheckoutSession(sessionId) {
      const session = await call(() => stripe.checkout.sessions.retrieve(sessionId));
      const subscription = typeof session.subscription === 'string' ? session.subscription : session.subscription?.id;
      return { status: requireString(session.status), url: session.url ?? null, subscriptionId: subscription ?? null };
    },
    async expireCheckoutSession(sessionId) {
      await call(() => stripe.checkout.sessions.expire(sessionId));
    },
    async getPrice(priceId) {
      const price = await call(() => stripe.prices.retrieve(priceId));
      return { unitAmount: price.unit_amount ?? null, currency: requireString(price.currency) };
    },
    async getSubscription(subscriptionId) {
      const subscription = await call(() => stripe.subscriptions.retrieve(subscriptionId));
      const state = subscriptionState(subscription as unknown as Record<string, unknown>);
      if (!state) throw new AppError('PROVIDER_RESPONSE_INVALID');
      return state;
    },
    async customerSubscriptions(customerId) {
      const list = await call(() => stripe.subscriptions.list({ customer: customerId, status: 'all', limit: 10 }));
      return list.data
        .map((s) => subscriptionState(s as unknown as Record<string, unknown>))
        .filter((s): s is NonNullable<typeof s> => s !== null);
    },
    async changePrice(subscriptionId, priceId) {
      const current = await call(() => stripe.subscriptions.retrieve(subscriptionId));
      const item = current.items?.data?.[0]?.id;
      if (typeof item !== 'string') throw new AppError('PROVIDER_RESPONSE_INVALID');
      const updated = await call(() =>
        stripe.subscriptions.update(subscriptionId, {
          items: [{ id: item, price: priceId }],
          proration_behavior: 'create_prorations',
        }),
      );
      const state = subscriptionState(updated as unknown as Record<string, unknown>);
      if (!state) throw new AppError('PROVIDER_RESPONSE_INVALID');
      return state;
    },
    async cancelSubscription(subscriptionId) {
      await call(() => stripe.subscriptions.cancel(subscriptionId));
    },
    async createPortalSession({ customerId, returnUrl }) {
      const session = await call(() =>
        stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl }),
      );
      return { url: requireString(session.url) };
    },
    async getEvent(eventId) {
      return providerEvent(await call(() => stripe.events.retrieve(eventId)));
    },
    async refundLatestInvoice({ subscriptionId, amount, idempotencyKey, metadata }) {
      // Stripe lists newest first; `status: paid` leaves drafts, open and void invoices out.
      const invoices = await call(() =>
        stripe.invoices.list({ subscription: subscriptionId, status: 'paid', limit: 1 }),
      );
      const invoice = invoices.data[0];
      if (!invoice) throw new AppError('BILLING_PAID_INVOICE_REQUIRED');
      const invoiceId = requireString(invoice.id);
      // Since API version 2025-03-31 an invoice names its payments, not a payment intent or charge of its own.
      const payments = await call(() =>
        stripe.invoicePayments.list({
          invoice: invoiceId,
          status: 'paid',
          limit: 1,
          expand: ['data.payment.payment_intent', 'data.payment.charge'],
        }),
      );
      const payment = payments.data[0]?.payment;
      const idOf = (v: unknown): string | null =>
        typeof v === 'string'
          ? v
          : typeof (v as { id?: unknown } | null)?.id === 'string'
            ? (v as { id: string }).id
            : null;
      const paymentIntent = idOf(payment?.payment_intent);
      const charge = paymentIntent ? null : idOf(payment?.charge);
      if (!paymentIntent && !charge)
        throw new AppError(
          'BILLING_PAID_INVOICE_REQUIRED',
          'The latest paid invoice has no card payment to refund (paid out of band or by credit).',
        );
      const refund = await call(() =>
        stripe.refunds.create(
          {
            ...(paymentIntent ? { payment_intent: paymentIntent } : { charge: charge! }),
            ...(amount !== null && { amount }),
            reason: 'requested_by_customer',
            metadata: { ...metadata, invoiceId },
          },
          { idempotencyKey },
        ),
      );
      return {
        refundId: requireString(refund.id),
        invoiceId,
        amount: typeof refund.amount === 'number' ? refund.amount : 0,
        currency: typeof refund.currency === 'string' ? refund.currency : '',
        status: typeof refund.status === 'string' ? refund.status : 'unknown',
        paymentId: (paymentIntent ?? charge)!,
      };
    },
    verifyEvent(rawBody, signature) {
      if (!signature || !settings.webhookSecret) throw new AppError('PROVIDER_SIGNATURE_INVALID');
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(rawBody, signature, settings.webhookSecret);
      } catch (e) {
        if (e instanceof Stripe.errors.StripeSignatureVerificationError)
          throw new AppError('PROVIDER_SIGNATURE_INVALID');
        // The signature held over a body that is not JSON.
        if (e instanceof SyntaxError) throw new AppError('INVALID_JSON', 'The signed body is not well-formed JSON.');
        throw new AppError('PROVIDER_EVENT_INVALID');
      }
      return providerEvent(event);
    },
  };
}

/** What we keep of a Stripe event; one without id, type or object is PROVIDER_EVENT_INVALID. */
function providerEvent(event: Stripe.Event): ProviderEvent {
  const object = (event.data as { object?: unknown } | undefined)?.object;
  if (typeof event.id !== 'string' || typeof event.type !== 'string' || typeof object !== 'object' || object === null)
    throw new AppError('PROVIDER_EVENT_INVALID');
  return {
    id: event.id,
    type: event.type,
    created: (event.created ?? 0) * 1000,
    object: object as Record<string, unknown>,
  };
}

async function call<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof Stripe.errors.StripeConnectionError)
      throw new AppError('PROVIDER_UNAVAILABLE', undefined, undefined, undefined, e);
    if (e instanceof Stripe.errors.StripeError)
      throw new AppError('PROVIDER_REQUEST_FAILED', undefined, { providerCode: e.code ?? null }, undefined, e);
    throw new AppError('PROVIDER_RESPONSE_INVALID', undefined, undefined, undefined, e);
  }
}

function requireString(value: unknown): string {
  if (typeof value !== 'string' || !value) throw new AppError('PROVIDER_RESPONSE_INVALID');
  return value;
}
