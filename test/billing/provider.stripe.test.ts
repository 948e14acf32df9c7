// The Stripe adapter against Stripe's official mock server.
import Stripe from 'stripe';
import { describe, expect, inject, it } from 'vitest';
import { createStripeProvider } from '../../src/billing/stripe.js';
import { AppError } from '../../src/errors/app-error.js';

const base = inject('stripeBase');
const settings = { secretKey: 'sk_test_123', webhookSecret: 'whsec_test_secret', apiBase: base ?? undefined };

async function codeOf(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AppError);
  return (e as AppError).code;
}

describe.skipIf(!base)('stripe adapter (stripe-mock)', () => {
  const provider = createStripeProvider(settings);

  it('creates a customer, a subscription checkout session and a portal session', async () => {
    const { customerId } = await provider.createCustomer({
      email: 'owner@example.com',
      accountId: 'acc_1',
      projectId: 'proj_1',
    });
    expect(customerId).toMatch(/^cus_/);
    const checkout = await provider.createCheckoutSession({
      customerId,
      priceId: 'price_monthly',
      projectId: 'proj_1',
      successUrl: 'http://board.test/ok',
      cancelUrl: 'http://board.test/no',
    });
    expect(checkout.url).toMatch(/^https?:\/\//);
    expect(checkout.sessionId).toMatch(/^cs_/);
    expect(await provider.getCheckoutSession(checkout.sessionId)).toMatchObject({
      status: expect.any(String),
      url: expect.stringMatching(/^https?:\/\//),
    });
    await provider.expireCheckoutSession(checkout.sessionId);
    const portal = await provider.createPortalSession({ customerId, returnUrl: 'http://board.test/account' });
    expect(portal.url).toMatch(/^https?:\/\//);
  });

  it('lists a customer’s subscriptions (the reconcile pass, when no event named one yet), each read as a retrieve reads it', async () => {
    const subs = await provider.customerSubscriptions('cus_any');
    expect(subs.length).toBeGreaterThan(0);
    const [first] = subs;
    expect(first).toMatchObject({
      id: expect.stringMatching(/^sub_/),
      customerId: expect.stringMatching(/^cus_/),
      status: expect.any(String),
    });
    expect(await provider.getSubscription(first!.id)).toMatchObject({
      id: first!.id,
      customerId: first!.customerId,
      status: first!.status,
    });
  });

  it('reads what a price charges, in the smallest unit of its currency', async () => {
    expect(await provider.getPrice('price_pro_monthly')).toEqual({ unitAmount: 2000, currency: 'usd' });
  });

  it('maps an unreachable provider to PROVIDER_UNAVAILABLE', async () => {
    const down = createStripeProvider({ ...settings, apiBase: 'http://127.0.0.1:1' });
    expect(await codeOf(down.createCustomer({ email: 'x@example.com', accountId: 'a', projectId: 'p' }))).toBe(
      'PROVIDER_UNAVAILABLE',
    );
  });

  it('maps a refused request (here: a key the provider rejects) to PROVIDER_REQUEST_FAILED', async () => {
    const refused = createStripeProvider({ ...settings, secretKey: 'not-a-key' });
    expect(
      await codeOf(refused.createPortalSession({ customerId: 'cus_1', returnUrl: 'http://board.test/account' })),
    ).toBe('PROVIDER_REQUEST_FAILED');
  });
});

describe('stripe webhook verification', () => {
  const provider = createStripeProvider(settings);
  const payload = JSON.stringify({
    id: 'evt_1',
    object: 'event',
    type: 'customer.subscription.updated',
    created: 1_700_000_000,
    data: { object: { id: 'sub_1', object: 'subscription' } },
  });
  const sign = (body: string, secret = settings.webhookSecret) =>
    Stripe.webhooks.generateTestHeaderString({ payload: body, secret });

  it('accepts an event signed over the exact raw body', () => {
    expect(provider.verifyEvent(Buffer.from(payload), sign(payload))).toEqual({
      id: 'evt_1',
      type: 'customer.subscription.updated',
      created: 1_700_000_000_000,
      object: { id: 'sub_1', object: 'subscription' },
    });
  });

  it('rejects a missing, empty, foreign or tampered signature', () => {
    const codes = [undefined, '', sign(payload, 'whsec_other'), sign(payload)].map((sig, i) => {
      try {
        provider.verifyEvent(Buffer.from(i === 3 ? payload.replace('sub_1', 'sub_2') : payload), sig);
        return 'accepted';
      } catch (e) {
        return (e as AppError).code;
      }
    });
    expect(codes).toEqual([
      'PROVIDER_SIGNATURE_INVALID',
      'PROVIDER_SIGNATURE_INVALID',
      'PROVIDER_SIGNATURE_INVALID',
      'PROVIDER_SIGNATURE_INVALID',
    ]);
  });
});
