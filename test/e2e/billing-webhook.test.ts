// Billing state and the provider's webhook over real HTTP (contract Part 4 "Billing", DOMAIN.md):
// payloads signed with the Stripe SDK's test-header helper.
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newBoard, type TestBoard } from '../support/board.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';
import { billingRecord, deliverSigned } from '../support/billing.js';
import { unique } from '../support/temp.js';

const SECRET = 'whsec_test_board_secret';
const PRICES = { month: 'price_pro_monthly', year: 'price_pro_yearly' };
const stripeBase = inject('stripeBase');

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({
    STRIPE_SECRET_KEY: 'sk_test_123',
    STRIPE_WEBHOOK_SECRET: SECRET,
    STRIPE_PRICE_MONTHLY: PRICES.month,
    STRIPE_PRICE_YEARLY: PRICES.year,
    // The webhook needs no provider call; GET billing's interval refresh does (a closed port when stripe-mock is absent).
    STRIPE_API_BASE: stripeBase ?? 'http://127.0.0.1:1',
    // What the two prices charge: the billing read shows them with the upgrades.
    REVENUE_PRO_MONTHLY_USD: '12',
    REVENUE_PRO_YEARLY_USD: '120',
  });
});
afterAll(async () => {
  await srv.stop();
});

let seq = 0;
function event(type: string, object: Record<string, unknown>, created = Math.floor(Date.now() / 1000)) {
  return {
    id: `evt_${unique('t')}_${++seq}`,
    object: 'event',
    type,
    created,
    livemode: false,
    api_version: '2025-01-01',
    data: { object },
  };
}

function subscription(
  customer: string,
  status: string,
  price: string,
  projectId: string | null = null,
  id = `sub_${customer}`,
) {
  return {
    id,
    object: 'subscription',
    customer,
    status,
    cancel_at_period_end: false,
    current_period_end: Math.floor(Date.now() / 1000) + 30 * 86400,
    metadata: projectId ? { projectId } : {},
    items: { data: [{ price: { id: price } }] },
  };
}

async function deliver(payload: unknown, headers?: Record<string, string>) {
  const body = JSON.stringify(payload);
  if (!headers) return deliverSigned(srv.url, body, SECRET);
  return new Client(srv.url).request('POST', '/api/billing/webhook', {
    raw: body,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** A board whose billing record has a customer attached (checkout attaches it; that operation comes with its own issue slice). */
async function billedBoard(): Promise<TestBoard & { customer: string }> {
  const board = await newBoard(srv.url);
  const customer = `cus_${unique('c')}`;
  const owner = (await board.owner.get('/api/auth/me')).body.user.id as string;
  await srv.store.billing.insert(billingRecord(board.projectId, owner, { customerId: customer }));
  return { ...board, customer };
}

const requestLimit = async (client: Client, projectId: string) =>
  Number((await client.get(`/api/status?projectId=${projectId}`)).headers.get('x-ratelimit-request-limit'));
const auditOf = async (board: TestBoard) =>
  (await board.owner.get(`/api/account/billing/events?projectId=${board.projectId}`)).body.events as {
    eventId: string;
    outcome: string;
  }[];

describe('billing state', () => {
  it('is Free with no subscription and offers Pro monthly and yearly at their prices; another member is refused', async () => {
    const board = await newBoard(srv.url);
    const res = await board.owner.get(`/api/account/billing?projectId=${board.projectId}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      projectId: board.projectId,
      plan: 'free',
      subscription: null,
      providerAvailable: true,
      upgradeOptions: [
        // What the provider's prices charge when it answers (stripe-mock: 20 USD each), else the configured ones.
        { plan: 'pro', interval: 'month', priceUsd: stripeBase ? 20 : 12 },
        { plan: 'pro', interval: 'year', priceUsd: stripeBase ? 20 : 120 },
      ],
    });
    const member = await newBoard(srv.url);
    await srv.store.members.insert({
      _id: `${board.projectId}:${(await member.owner.get('/api/auth/me')).body.user.id}`,
      version: 1,
      projectId: board.projectId,
      accountId: (await member.owner.get('/api/auth/me')).body.user.id,
      role: 'admin',
      acceptedAt: Date.now(),
    });
    expectError(
      await member.owner.get(`/api/account/billing?projectId=${board.projectId}`),
      403,
      'PROJECT_SCOPE_DENIED',
    );
  });
});

describe('POST /api/billing/webhook', () => {
  it('makes a board Pro once per event, its rate headers with it, and keeps a pending and a terminal row per delivery', async () => {
    const board = await billedBoard();
    const agent = await board.agent('watcher');
    expect(await requestLimit(agent, board.projectId)).toBe(600);
    const created = event(
      'customer.subscription.created',
      subscription(board.customer, 'active', PRICES.month, board.projectId),
    );
    const first = await deliver(created);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ received: true, handled: true });
    expect(await requestLimit(agent, board.projectId)).toBe(6000);
    const state = (await board.owner.get(`/api/account/billing?projectId=${board.projectId}`)).body;
    expect(state).toMatchObject({
      plan: 'pro',
      subscription: { status: 'active', interval: 'month', cancelAtPeriodEnd: false },
    });
    // The same event again: acknowledged, nothing changes, and its own two rows.
    const before = await srv.store.billing.get(board.projectId);
    expect((await deliver(created)).status).toBe(200);
    expect((await srv.store.billing.get(board.projectId))!.version).toBe(before!.version);
    const rows = (await auditOf(board)).filter((r) => r.eventId === created.id).map((r) => r.outcome);
    expect(rows.sort()).toEqual(['applied', 'duplicate', 'pending', 'pending']);
  });

  it('refuses a tampered body, a wrong secret, an old timestamp, a missing or empty header, and writes nothing', async () => {
    const board = await billedBoard();
    const payload = event('customer.subscription.created', subscription(board.customer, 'active', PRICES.month));
    const body = JSON.stringify(payload);
    const good = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET });
    const auditBefore = await srv.store.audit.count({ action: 'billing.webhook' });
    const post = (raw: string, headers: Record<string, string>) =>
      new Client(srv.url).request('POST', '/api/billing/webhook', {
        raw,
        headers: { 'content-type': 'application/json', ...headers },
      });
    expectError(
      await post(body.replace('active', 'trialing'), { 'stripe-signature': good }),
      400,
      'PROVIDER_SIGNATURE_INVALID',
    );
    expectError(
      await post(body, {
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret: 'whsec_someone_else' }),
      }),
      400,
      'PROVIDER_SIGNATURE_INVALID',
    );
    expectError(
      await post(body, {
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({
          payload: body,
          secret: SECRET,
          timestamp: Math.floor(Date.now() / 1000) - 301,
        }),
      }),
      400,
      'PROVIDER_SIGNATURE_INVALID',
    );
    expectError(await post(body, {}), 400, 'PROVIDER_SIGNATURE_INVALID');
    expectError(await post(body, { 'stripe-signature': '' }), 400, 'PROVIDER_SIGNATURE_INVALID');
    expect(await srv.store.audit.count({ action: 'billing.webhook' })).toBe(auditBefore);
    expect((await srv.store.billing.get(board.projectId))!.status).toBeNull();
  });

  it('never lets an older subscription change overwrite a newer one', async () => {
    const board = await billedBoard();
    const now = Math.floor(Date.now() / 1000);
    expect(
      (await deliver(event('customer.subscription.updated', subscription(board.customer, 'active', PRICES.year), now)))
        .status,
    ).toBe(200);
    expect(
      (
        await deliver(
          event('customer.subscription.updated', subscription(board.customer, 'past_due', PRICES.month), now - 60),
        )
      ).status,
    ).toBe(200);
    const record = (await srv.store.billing.get(board.projectId))!;
    expect(record).toMatchObject({ status: 'active', interval: 'year', changedAt: now * 1000 });
    expect((await auditOf(board)).map((r) => r.outcome)).toContain('ignored');
  });

  it('orders two changes of a subscription in the same second by its life: created `incomplete` delivered after `active` changes nothing', async () => {
    const board = await billedBoard();
    const now = Math.floor(Date.now() / 1000);
    const changed = async (type: string, status: string) =>
      (await deliver(event(type, subscription(board.customer, status, PRICES.month), now))).status;
    expect(await changed('customer.subscription.updated', 'active')).toBe(200);
    expect(await changed('customer.subscription.created', 'incomplete')).toBe(200); // the provider's order, delivered late
    expect(await srv.store.billing.get(board.projectId)).toMatchObject({ status: 'active' });
    expect(await changed('customer.subscription.deleted', 'canceled')).toBe(200); // a later stage in the same second stands
    expect(await changed('customer.subscription.updated', 'active')).toBe(200);
    expect(await srv.store.billing.get(board.projectId)).toMatchObject({ status: 'canceled' });
    expect((await board.owner.get(`/api/account/billing?projectId=${board.projectId}`)).body.plan).toBe('free');
  });

  it('keeps the new subscription when the old one’s end comes after it, and a canceled one is not revived by an invoice', async () => {
    const board = await billedBoard();
    const now = Math.floor(Date.now() / 1000);
    const [old, fresh] = [`sub_old_${board.customer}`, `sub_new_${board.customer}`];
    const changed = async (type: string, status: string, id: string, at: number) =>
      (await deliver(event(type, subscription(board.customer, status, PRICES.month, board.projectId, id), at))).status;
    expect(await changed('customer.subscription.updated', 'past_due', old, now - 100)).toBe(200);
    // Overdue, the owner checks out again: a second subscription, active.
    expect(await changed('customer.subscription.created', 'active', fresh, now - 50)).toBe(200);
    // The provider's dunning ends the old one.
    expect(await changed('customer.subscription.deleted', 'canceled', old, now)).toBe(200);
    expect(await srv.store.billing.get(board.projectId)).toMatchObject({ subscriptionId: fresh, status: 'active' });
    expect((await auditOf(board)).map((r) => r.outcome)).toContain('ignored');
    // The new one ends; an invoice of the old one, or one naming no subscription, revives nothing.
    expect(await changed('customer.subscription.deleted', 'canceled', fresh, now + 10)).toBe(200);
    const invoice = (subscription: string | null) => ({
      id: `in_${unique('i')}`,
      object: 'invoice',
      customer: board.customer,
      subscription,
    });
    expect((await deliver(event('invoice.payment_failed', invoice(old), now + 20))).status).toBe(200);
    expect((await deliver(event('invoice.payment_failed', invoice(null), now + 30))).status).toBe(200);
    expect((await deliver(event('invoice.paid', invoice(null), now + 40))).status).toBe(200);
    expect(await srv.store.billing.get(board.projectId)).toMatchObject({ subscriptionId: fresh, status: 'canceled' });
    expect((await board.owner.get(`/api/account/billing?projectId=${board.projectId}`)).body.plan).toBe('free');
  });

  it('turns the board Free on deleted, with Free’s rate headers', async () => {
    const board = await billedBoard();
    const agent = await board.agent('watcher');
    const now = Math.floor(Date.now() / 1000);
    await deliver(
      event('customer.subscription.created', subscription(board.customer, 'active', PRICES.month), now - 10),
    );
    expect(await requestLimit(agent, board.projectId)).toBe(6000);
    expect(
      (
        await deliver(
          event('customer.subscription.deleted', subscription(board.customer, 'canceled', PRICES.month), now),
        )
      ).status,
    ).toBe(200);
    expect(await requestLimit(agent, board.projectId)).toBe(600);
    expect((await board.owner.get(`/api/account/billing?projectId=${board.projectId}`)).body).toMatchObject({
      plan: 'free',
      subscription: { status: 'canceled' },
    });
  });

  it('refuses an event for a customer of no project, or naming another project, and changes nothing', async () => {
    const board = await billedBoard();
    expectError(
      await deliver(
        event('customer.subscription.created', subscription(`cus_${unique('stranger')}`, 'active', PRICES.month)),
      ),
      400,
      'PROVIDER_EVENT_ACCOUNT_MISMATCH',
    );
    expectError(
      await deliver(
        event('customer.subscription.created', subscription(board.customer, 'active', PRICES.month, 'another-project')),
      ),
      400,
      'PROVIDER_EVENT_ACCOUNT_MISMATCH',
    );
    expect((await srv.store.billing.get(board.projectId))!.status).toBeNull();
  });

  it('refuses a signed body that is not JSON as INVALID_JSON, writing nothing', async () => {
    const body = '{"id":"evt_broken",';
    const before = await srv.store.audit.count({ action: 'billing.webhook' });
    expectError(await deliverSigned(srv.url, body, SECRET), 400, 'INVALID_JSON');
    expect(await srv.store.audit.count({ action: 'billing.webhook' })).toBe(before);
  });

  it('acknowledges a type it does not handle, and refuses an event without an object', async () => {
    const res = await deliver(event('customer.created', { id: 'cus_x', object: 'customer' }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, handled: false });
    const body = JSON.stringify({
      id: 'evt_no_object',
      object: 'event',
      type: 'customer.subscription.updated',
      created: 1,
      data: {},
    });
    expectError(await deliverSigned(srv.url, body, SECRET), 400, 'PROVIDER_EVENT_INVALID');
  });
});

describe('without billing configured', () => {
  it('answers 503 BILLING_UNAVAILABLE on the webhook and says providerAvailable: false', async () => {
    const bare = await startTestServer();
    try {
      const board = await newBoard(bare.url);
      expect((await board.owner.get(`/api/account/billing?projectId=${board.projectId}`)).body.providerAvailable).toBe(
        false,
      );
      expectError(
        await new Client(bare.url).request('POST', '/api/billing/webhook', {
          raw: '{}',
          headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=x' },
        }),
        503,
        'BILLING_UNAVAILABLE',
      );
    } finally {
      await bare.stop();
    }
  });
});
