// The operators' money routes (DOMAIN.md "Operators", Money) over real HTTP, run on each store:
// dunning, an account's billing, the subscription re-read and the refund against stripe-mock, a
// complimentary plan that ends by itself, the received provider events and their replay (applied
// once per event id), and a provider that cannot be reached (502, nothing changed).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { serveStore, type OpenedStore } from '../../support/stores.js';
import { Client, signedUp, type TestServer } from '../../support/server.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { billingRecord, deliverSigned } from '../../support/billing.js';
import { expectError } from '../../support/expect-error.js';
import { unique } from '../../support/temp.js';
import type { AuditRecord, BillingRecord } from '../../../store/ports/store.js';

const stripeBase = inject('stripeBase');
const SECRET = 'whsec_money_test';
const PRICES = { month: 'price_pro_monthly', year: 'price_pro_yearly' };
const DAY = 86_400_000;
const billingEnv = (apiBase: string): Record<string, string> => ({
  STRIPE_SECRET_KEY: 'sk_test_123',
  STRIPE_WEBHOOK_SECRET: SECRET,
  STRIPE_PRICE_MONTHLY: PRICES.month,
  STRIPE_PRICE_YEARLY: PRICES.year,
  STRIPE_API_BASE: apiBase,
  // Every account here signs up from 127.0.0.1.
  ADDRESS_RATE_PER_MINUTE: '100000',
});

let seq = 0;
const stripeEvent = (
  type: string,
  object: Record<string, unknown>,
  created = Math.floor(Date.now() / 1000),
  id = `evt_${unique('m').replace(/[^A-Za-z0-9]/g, '')}${++seq}`,
) => ({ id, object: 'event', type, created, livemode: false, api_version: '2026-10-28.endive', data: { object } });
const subscription = (customer: string, status: string, projectId: string, price = PRICES.month) => ({
  id: `sub_${customer}`,
  object: 'subscription',
  customer,
  status,
  cancel_at_period_end: false,
  metadata: { projectId },
  items: { data: [{ price: { id: price }, current_period_end: Math.floor(Date.now() / 1000) + 30 * 86400 }] },
});

/**
 * Stripe's events and invoices endpoints as a local HTTP server, for what stripe-mock cannot answer:
 * stripe-mock returns one fixed event (plan.created) for every id, so a handled event's replay needs
 * its own; and it always lists an invoice, so a subscription with no paid invoice needs an empty list.
 */
async function eventsEndpoint(
  events: Map<string, unknown>,
): Promise<{ url: string; requests: string[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    const id = /^\/v1\/events\/([^/?]+)/.exec(req.url ?? '')?.[1];
    const event = id ? events.get(decodeURIComponent(id)) : undefined;
    if (req.url?.startsWith('/v1/invoices'))
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: [], has_more: false, url: '/v1/invoices' }));
    else if (event) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(event));
    else
      res.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such event' },
        }),
      );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

interface Owned {
  owner: Client;
  accountId: string;
  projectId: string;
}

async function owned(srv: TestServer): Promise<Owned> {
  const { client, accountId } = await signedUp(srv.url);
  const projectId = (await client.get('/api/projects')).body.projects[0].projectId as string;
  return { owner: client, accountId, projectId };
}

const requestLimit = async (b: Owned) =>
  Number((await b.owner.get(`/api/status?projectId=${b.projectId}`)).headers.get('x-ratelimit-request-limit'));
const operatorRows = (srv: TestServer, target: string): Promise<AuditRecord[]> =>
  srv.store.audit.find({ target }, { sort: [['at', 1]] });

export function moneyFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe.skipIf(!stripeBase)(`operators' money routes on the ${name} store`, () => {
    const email = operatorEmail();
    const env = { OPERATOR_EMAILS: email };
    const served = serveStore(open, { ...env, ...billingEnv(stripeBase!) });
    let op: Client;
    let operatorId: string;
    /** The customer stripe-mock's fixture subscription belongs to (its answer for every subscription id). */
    let fixtureCustomer: string;
    beforeAll(async () => {
      ({ client: op, accountId: operatorId } = await confirmedOperator(served.srv, email));
      const fixture = await fetch(`${stripeBase}/v1/subscriptions/sub_probe`, {
        headers: { authorization: 'Bearer sk_test_123' },
      });
      fixtureCustomer = ((await fixture.json()) as { customer: string }).customer;
    });
    const srv = () => served.srv;
    /** A board billed to stripe-mock's fixture customer (unique across boards: the previous one lets it go). */
    const billedToFixture = async (over: Partial<BillingRecord> = {}): Promise<Owned> => {
      const b = await owned(srv());
      await srv().store.billing.deleteMany({ customerId: fixtureCustomer });
      await srv().store.billing.insert(
        billingRecord(b.projectId, b.accountId, {
          customerId: fixtureCustomer,
          subscriptionId: `sub_${unique('s')}`,
          ...over,
        }),
      );
      return b;
    };

    it('lists boards past due or unpaid, most recently overdue first, with days overdue, page by page', async () => {
      const now = Date.now();
      const late = await owned(srv());
      const later = await owned(srv());
      const paying = await owned(srv());
      for (const b of [late, later, paying])
        await srv().store.billing.insert(billingRecord(b.projectId, b.accountId, { customerId: `cus_${unique('d')}` }));
      const customer = async (b: Owned) => (await srv().store.billing.get(b.projectId))!.customerId;
      // As production gets there: a failed invoice 3 days ago; a subscription unpaid since 10 days ago; one active.
      const deliver = async (event: unknown) =>
        expect((await deliverSigned(srv().url, JSON.stringify(event), SECRET)).status).toBe(200);
      await deliver(
        stripeEvent(
          'customer.subscription.created',
          subscription(await customer(late), 'active', late.projectId),
          Math.floor((now - 20 * DAY) / 1000),
        ),
      );
      await deliver(
        stripeEvent(
          'invoice.payment_failed',
          {
            id: `in_${unique('i')}`,
            object: 'invoice',
            customer: await customer(late),
            subscription: `sub_${await customer(late)}`,
          },
          Math.floor((now - 3 * DAY) / 1000),
        ),
      );
      await deliver(
        stripeEvent(
          'customer.subscription.updated',
          subscription(await customer(later), 'unpaid', later.projectId),
          Math.floor((now - 10 * DAY) / 1000),
        ),
      );
      await deliver(
        stripeEvent('customer.subscription.created', subscription(await customer(paying), 'active', paying.projectId)),
      );

      const res = await op.get('/api/admin/billing/dunning');
      expect(res.status, res.text).toBe(200);
      const mine = (res.body.boards as { projectId: string }[]).filter((b) =>
        [late, later, paying].some((o) => o.projectId === b.projectId),
      );
      expect(mine).toEqual([
        expect.objectContaining({
          projectId: late.projectId,
          status: 'past_due',
          daysOverdue: 3,
          ownerId: late.accountId,
          plan: 'pro',
          billingPlan: 'pro',
          customerId: await customer(late),
        }),
        expect.objectContaining({
          projectId: later.projectId,
          status: 'unpaid',
          daysOverdue: 10,
          plan: 'free',
          billingPlan: 'free',
        }),
      ]);
      // Page by page (limit 1): the same boards in the same order, each once.
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: { boards: { projectId: string }[]; nextCursor: string | null } } =
          await op.get(`/api/admin/billing/dunning?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        expect(page.body.boards.length).toBeLessThanOrEqual(1);
        walked.push(...page.body.boards.map((b) => b.projectId));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(walked).toEqual((res.body.boards as { projectId: string }[]).map((b) => b.projectId));
      expectError(await op.get('/api/admin/billing/dunning?cursor=not*a*cursor'), 400, 'INVALID_CURSOR');
      expectError(await op.get('/api/admin/billing/dunning?limit=0'), 400, 'INVALID_INPUT');
      // A non-operator, the board's own owner included, is answered as an unknown path.
      expectError(await late.owner.get('/api/admin/billing/dunning'), 404, 'NOT_FOUND');
    });

    it('shows an account’s billing: its boards’ records, provider ids and received events', async () => {
      const b = await owned(srv());
      const customer = `cus_${unique('acct')}`;
      await srv().store.billing.insert(billingRecord(b.projectId, b.accountId, { customerId: customer }));
      const created = stripeEvent(
        'customer.subscription.created',
        subscription(customer, 'active', b.projectId, PRICES.year),
      );
      expect((await deliverSigned(srv().url, JSON.stringify(created), SECRET)).status).toBe(200);
      expect((await deliverSigned(srv().url, JSON.stringify(created), SECRET)).status).toBe(200);

      const res = await op.get(`/api/admin/billing/${b.accountId}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.account).toMatchObject({ id: b.accountId, deletedAt: null });
      expect(res.body.boards).toEqual([
        {
          projectId: b.projectId,
          name: expect.any(String),
          ownerId: b.accountId,
          plan: 'pro',
          billingPlan: 'pro',
          complimentary: null,
          billing: expect.objectContaining({
            payerAccountId: b.accountId,
            customerId: customer,
            subscriptionId: `sub_${customer}`,
            status: 'active',
            interval: 'year',
            priceId: PRICES.year,
            overdueSince: null,
          }),
          events: [
            expect.objectContaining({
              eventId: created.id,
              type: 'customer.subscription.created',
              outcome: 'duplicate',
              replay: false,
            }),
            expect.objectContaining({ eventId: created.id, outcome: 'applied' }),
          ],
        },
      ]);
      expectError(await op.get('/api/admin/billing/00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
      expectError(await op.get(`/api/admin/billing/${encodeURIComponent('../../etc')}`), 404, 'NOT_FOUND');
    });

    it('re-reads a subscription from stripe-mock and settles the board’s plan as the webhook would, with its audit row', async () => {
      // Past due for 30 days here (so Free); the provider says active.
      const b = await billedToFixture({
        status: 'past_due',
        pastDueSince: Date.now() - 30 * DAY,
        priceId: PRICES.month,
        interval: 'month',
      });
      await srv().server.sweepBilling();
      expect(await requestLimit(b)).toBe(600);
      const before = (await srv().store.billing.get(b.projectId))!;
      const res = await op.post(`/api/admin/users/${b.accountId}/subscription`, {
        projectId: b.projectId,
        reason: 'customer says they paid',
      });
      expect(res.status, res.text).toBe(200);
      // stripe-mock's fixture: active, cancelling at period end, on a price that is not ours (so no interval).
      expect(res.body).toMatchObject({
        projectId: b.projectId,
        plan: 'pro',
        billing: {
          customerId: fixtureCustomer,
          subscriptionId: before.subscriptionId,
          status: 'active',
          cancelAtPeriodEnd: true,
          interval: null,
          overdueSince: null,
        },
      });
      expect(await srv().store.billing.get(b.projectId)).toMatchObject({
        status: 'active',
        pastDueSince: null,
        cancelAtPeriodEnd: true,
      });
      expect((await srv().store.projects.get(b.projectId))!.plan).toBe('pro');
      expect(await requestLimit(b)).toBe(6000);
      const rows = await operatorRows(srv(), `board:${b.projectId}`);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        actor: `user:${operatorId}`,
        action: 'admin.subscription',
        projectId: b.projectId,
        data: {
          reason: 'customer says they paid',
          operator: true,
          userId: b.accountId,
          before: { status: 'past_due' },
          after: { status: 'active' },
          plan: 'pro',
        },
      });

      // Not the owner's board, no subscription, or a subscription of another customer: refused, nothing changed.
      const other = await owned(srv());
      expectError(
        await op.post(`/api/admin/users/${other.accountId}/subscription`, { projectId: b.projectId }),
        404,
        'NOT_FOUND',
      );
      expectError(
        await op.post(`/api/admin/users/${other.accountId}/subscription`, { projectId: other.projectId }),
        409,
        'BILLING_SUBSCRIPTION_REQUIRED',
      );
      await srv().store.billing.insert(
        billingRecord(other.projectId, other.accountId, {
          customerId: `cus_${unique('x')}`,
          subscriptionId: 'sub_elsewhere',
          status: 'canceled',
        }),
      );
      const foreign = (await srv().store.billing.get(other.projectId))!;
      expectError(
        await op.post(`/api/admin/users/${other.accountId}/subscription`, { projectId: other.projectId }),
        409,
        'BILLING_CUSTOMER_CONFLICT',
      );
      expect(await srv().store.billing.get(other.projectId)).toEqual(foreign);
      expect(await operatorRows(srv(), `board:${other.projectId}`)).toEqual([]);
      expectError(
        await op.post(`/api/admin/users/${other.accountId}/subscription`, { projectId: other.projectId, extra: 1 }),
        400,
        'INVALID_INPUT',
      );
    });

    it('refunds the latest paid invoice through stripe-mock, with its audit row; a reason is required', async () => {
      const b = await billedToFixture({ status: 'active', priceId: PRICES.month, interval: 'month' });
      const record = (await srv().store.billing.get(b.projectId))!;
      expectError(
        await op.post(`/api/admin/users/${b.accountId}/refund`, { projectId: b.projectId, amount: 500 }),
        400,
        'INVALID_INPUT',
      );
      expectError(
        await op.post(`/api/admin/users/${b.accountId}/refund`, {
          projectId: b.projectId,
          reason: 'double charge',
          amount: 0,
        }),
        400,
        'INVALID_INPUT',
      );
      expect(await operatorRows(srv(), `board:${b.projectId}`)).toEqual([]);

      const res = await op.post(`/api/admin/users/${b.accountId}/refund`, {
        projectId: b.projectId,
        reason: 'double charge',
        amount: 500,
      });
      expect(res.status, res.text).toBe(200);
      // stripe-mock answers its fixture refund with the amount and payment we sent echoed back.
      expect(res.body).toEqual({
        projectId: b.projectId,
        refund: {
          refundId: expect.stringMatching(/^re_/),
          invoiceId: expect.stringMatching(/^in_/),
          amount: 500,
          currency: expect.any(String),
          status: expect.any(String),
          paymentId: expect.stringMatching(/^pi_/),
        },
      });
      const whole = await op.post(`/api/admin/users/${b.accountId}/refund`, {
        projectId: b.projectId,
        reason: 'refund the month',
      });
      expect(whole.status, whole.text).toBe(200);
      expect(whole.body.refund.refundId).toMatch(/^re_/);
      // A refund changes no billing record.
      expect(await srv().store.billing.get(b.projectId)).toEqual(record);
      const rows = await operatorRows(srv(), `board:${b.projectId}`);
      expect(rows.map((r) => [r.action, r.data.reason, r.data.requested])).toEqual([
        ['admin.refund', 'double charge', 500],
        ['admin.refund', 'refund the month', null],
      ]);
      expect(rows[0]!.data).toMatchObject({
        refundId: res.body.refund.refundId,
        invoiceId: res.body.refund.invoiceId,
        amount: 500,
        userId: b.accountId,
      });
      expectError(
        await op.post(`/api/admin/users/${(await owned(srv())).accountId}/refund`, {
          projectId: b.projectId,
          reason: 'wrong account',
        }),
        404,
        'NOT_FOUND',
      );
    });

    it('lists received provider events newest first, page by page, and replays one fetched from stripe-mock', async () => {
      const b = await owned(srv());
      const customer = `cus_${unique('w')}`;
      await srv().store.billing.insert(billingRecord(b.projectId, b.accountId, { customerId: customer }));
      const first = stripeEvent('customer.subscription.created', subscription(customer, 'active', b.projectId));
      const second = stripeEvent('customer.created', { id: customer, object: 'customer' });
      for (const e of [first, second])
        expect((await deliverSigned(srv().url, JSON.stringify(e), SECRET)).status).toBe(200);
      const res = await op.get('/api/admin/webhooks?limit=200');
      expect(res.status, res.text).toBe(200);
      const events = res.body.events as { eventId: string; outcome: string; type: string }[];
      expect(events.slice(0, 2)).toEqual([
        expect.objectContaining({ eventId: second.id, type: 'customer.created', outcome: 'ignored', projectId: null }),
        expect.objectContaining({
          eventId: first.id,
          type: 'customer.subscription.created',
          outcome: 'applied',
          projectId: b.projectId,
          replay: false,
        }),
      ]);
      expect(events.some((e) => e.outcome === 'pending')).toBe(false);
      // Page by page: the same events, in the same order.
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const page: {
          status: number;
          body: { events: { eventId: string; outcome: string }[]; nextCursor: string | null };
        } = await op.get(`/api/admin/webhooks?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        walked.push(...page.body.events.map((e) => `${e.eventId}:${e.outcome}`));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(walked).toEqual(events.map((e) => `${e.eventId}:${e.outcome}`));
      expectError(
        await op.get(`/api/admin/webhooks?cursor=${Buffer.from('x:y').toString('base64url')}`),
        400,
        'INVALID_CURSOR',
      );

      // stripe-mock answers any event id with its fixture, a plan.created event: fetched, acknowledged, not handled.
      const replayed = await op.post(`/api/admin/webhooks/${first.id}/replay`, { reason: 'check the fetch' });
      expect(replayed.status, replayed.text).toBe(200);
      expect(replayed.body).toEqual({
        eventId: first.id,
        type: 'plan.created',
        projectId: null,
        handled: false,
        outcome: 'ignored',
      });
      const rows = await operatorRows(srv(), `event:${first.id}`);
      expect(rows).toEqual([
        expect.objectContaining({
          action: 'admin.webhook.replay',
          actor: `user:${operatorId}`,
          data: expect.objectContaining({ reason: 'check the fetch', outcome: 'ignored', type: 'plan.created' }),
        }),
      ]);
      expect((await op.get('/api/admin/webhooks?limit=1')).body.events[0]).toMatchObject({
        eventId: first.id,
        outcome: 'ignored',
        replay: true,
      });
      expectError(await op.post('/api/admin/webhooks/not-an-event/replay'), 404, 'NOT_FOUND');
    });

    it('grants a complimentary plan that ends by itself, then the plan is billing’s again', async () => {
      const free = await owned(srv());
      const paying = await owned(srv());
      const customer = `cus_${unique('comp')}`;
      await srv().store.billing.insert(billingRecord(paying.projectId, paying.accountId, { customerId: customer }));
      expect(
        (
          await deliverSigned(
            srv().url,
            JSON.stringify(
              stripeEvent('customer.subscription.created', subscription(customer, 'active', paying.projectId)),
            ),
            SECRET,
          )
        ).status,
      ).toBe(200);
      const endsAt = new Date(Date.now() + 3_600_000).toISOString();
      expectError(
        await op.post('/api/admin/plan', { projectId: free.projectId, plan: 'pro', until: endsAt }),
        400,
        'INVALID_INPUT',
      );
      expectError(
        await op.post('/api/admin/plan', {
          projectId: free.projectId,
          plan: 'pro',
          until: new Date(Date.now() - 60_000).toISOString(),
          reason: 'too late',
        }),
        400,
        'INVALID_INPUT',
      );
      expectError(
        await op.post('/api/admin/plan', {
          projectId: free.projectId,
          plan: 'pro',
          until: new Date(Date.now() + 400 * DAY).toISOString(),
          reason: 'too long',
        }),
        400,
        'INVALID_INPUT',
      );
      expectError(
        await op.post('/api/admin/plan', {
          projectId: free.projectId,
          plan: 'enterprise',
          until: endsAt,
          reason: 'no such plan',
        }),
        400,
        'INVALID_INPUT',
      );
      expectError(
        await op.post('/api/admin/plan', {
          projectId: 'no-such-board',
          plan: 'pro',
          until: endsAt,
          reason: 'conference demo',
        }),
        404,
        'NOT_FOUND',
      );
      expect(await operatorRows(srv(), `board:${free.projectId}`)).toEqual([]);

      for (const b of [free, paying]) {
        const res = await op.post('/api/admin/plan', {
          projectId: b.projectId,
          plan: 'pro',
          until: endsAt,
          reason: 'conference demo',
        });
        expect(res.status, res.text).toBe(200);
        expect(res.body).toEqual({
          projectId: b.projectId,
          plan: 'pro',
          billingPlan: b === free ? 'free' : 'pro',
          complimentary: { plan: 'pro', until: endsAt },
        });
        expect(await requestLimit(b)).toBe(6000);
      }
      expect((await op.get(`/api/admin/billing/${free.accountId}`)).body.boards[0]).toMatchObject({
        plan: 'pro',
        billingPlan: 'free',
        complimentary: { plan: 'pro', until: endsAt },
        billing: null,
      });
      expect((await free.owner.get(`/api/account/billing?projectId=${free.projectId}`)).body.plan).toBe('pro');
      const rows = await operatorRows(srv(), `board:${free.projectId}`);
      expect(rows).toEqual([
        expect.objectContaining({
          action: 'admin.plan',
          actor: `user:${operatorId}`,
          projectId: free.projectId,
          data: expect.objectContaining({
            reason: 'conference demo',
            plan: 'pro',
            until: endsAt,
            planBefore: 'free',
            planAfter: 'pro',
          }),
        }),
      ]);

      // Before its end the sweep leaves it; at its end the free board is Free again and the paying one stays Pro (billing's).
      expect((await srv().server.sweepBilling()).complimentaryEnded).not.toContain(free.projectId);
      expect(await requestLimit(free)).toBe(6000);
      srv().advance(3_600_000 + 1000);
      expect((await srv().server.sweepBilling()).complimentaryEnded).toEqual(
        expect.arrayContaining([free.projectId, paying.projectId]),
      );
      expect(await requestLimit(free)).toBe(600);
      expect(await requestLimit(paying)).toBe(6000);
      expect(await srv().store.projects.get(free.projectId)).toMatchObject({
        plan: 'free',
        compPlan: null,
        compUntil: null,
      });
      expect((await op.get(`/api/admin/billing/${free.accountId}`)).body.boards[0]).toMatchObject({
        plan: 'free',
        complimentary: null,
      });
      expect((await srv().server.sweepBilling()).complimentaryEnded).toEqual([]);
    });
  });

  describe.skipIf(!stripeBase)(`replaying a handled event on the ${name} store`, () => {
    const email = operatorEmail();
    const events = new Map<string, unknown>();
    let endpoint: Awaited<ReturnType<typeof eventsEndpoint>>;
    // The server starts in serveStore's hook, registered after this one: the endpoint listens by then.
    const env: Record<string, string> = { OPERATOR_EMAILS: email, ...billingEnv('') };
    beforeAll(async () => {
      endpoint = await eventsEndpoint(events);
      env.STRIPE_API_BASE = endpoint.url;
    });
    afterAll(() => endpoint.close());
    const served = serveStore(open, env);
    let op: Client;
    beforeAll(async () => {
      ({ client: op } = await confirmedOperator(served.srv, email));
    });

    it('applies an event fetched again once per event id: replaying one already applied changes nothing', async () => {
      const srv = served.srv;
      const b = await owned(srv);
      const customer = `cus_${unique('r')}`;
      await srv.store.billing.insert(billingRecord(b.projectId, b.accountId, { customerId: customer }));
      const now = Math.floor(Date.now() / 1000);
      // Delivered and applied: active.
      const delivered = stripeEvent(
        'customer.subscription.created',
        subscription(customer, 'active', b.projectId),
        now - 60,
      );
      events.set(delivered.id, delivered);
      expect((await deliverSigned(srv.url, JSON.stringify(delivered), SECRET)).status).toBe(200);
      const applied = (await srv.store.billing.get(b.projectId))!;
      expect(applied.status).toBe('active');

      const replay = (id: string) => op.post(`/api/admin/webhooks/${id}/replay`, { reason: 'support ticket 12' });
      const again = await replay(delivered.id);
      expect(again.status, again.text).toBe(200);
      expect(again.body).toEqual({
        eventId: delivered.id,
        type: 'customer.subscription.created',
        projectId: b.projectId,
        handled: true,
        outcome: 'duplicate',
      });
      expect(await srv.store.billing.get(b.projectId)).toEqual(applied);
      expect(endpoint.requests).toContain(`GET /v1/events/${delivered.id}`);

      // Never delivered (the provider gave up): the replay applies it, once.
      const missed = stripeEvent('customer.subscription.updated', subscription(customer, 'past_due', b.projectId), now);
      events.set(missed.id, missed);
      expect((await replay(missed.id)).body).toMatchObject({ handled: true, outcome: 'applied' });
      const settled = (await srv.store.billing.get(b.projectId))!;
      expect(settled).toMatchObject({ status: 'past_due', changedAt: now * 1000 });
      const project = await srv.store.projects.get(b.projectId);
      expect((await replay(missed.id)).body).toMatchObject({ outcome: 'duplicate' });
      expect(await srv.store.billing.get(b.projectId)).toEqual(settled);
      expect(await srv.store.projects.get(b.projectId)).toEqual(project);

      // An older change fetched later does not overwrite the newer state.
      const stale = stripeEvent(
        'customer.subscription.updated',
        subscription(customer, 'canceled', b.projectId),
        now - 30,
      );
      events.set(stale.id, stale);
      expect((await replay(stale.id)).body).toMatchObject({ outcome: 'ignored' });
      expect(await srv.store.billing.get(b.projectId)).toEqual(settled);

      const rows = await srv.store.audit.find({ actor: 'provider', projectId: b.projectId }, { sort: [['at', 1]] });
      expect(
        rows
          .filter((r) => r.data.replay === true && r.data.outcome !== 'pending')
          .map((r) => [r.data.eventId, r.data.outcome]),
      ).toEqual([
        [delivered.id, 'duplicate'],
        [missed.id, 'applied'],
        [missed.id, 'duplicate'],
        [stale.id, 'ignored'],
      ]);
      expect(
        (await srv.store.audit.find({ action: 'admin.webhook.replay', target: `event:${missed.id}` }))
          .map((r) => r.data.outcome)
          .sort(),
      ).toEqual(['applied', 'duplicate']);
      // An event the provider does not know: its refusal, and nothing written.
      const before = await srv.store.audit.count({});
      expectError(await replay('evt_unknown'), 502, 'PROVIDER_REQUEST_FAILED');
      expect(await srv.store.audit.count({})).toBe(before);

      // An event of a customer attached to none of our boards: refused after its rows, the operator's row says so.
      const foreign = stripeEvent(
        'customer.subscription.updated',
        subscription(`cus_${unique('stranger')}`, 'active', b.projectId),
        now,
      );
      events.set(foreign.id, foreign);
      expectError(await replay(foreign.id), 400, 'PROVIDER_EVENT_ACCOUNT_MISMATCH');
      expect(await srv.store.billing.get(b.projectId)).toEqual(settled);
      expect(await srv.store.audit.find({ target: `event:${foreign.id}` })).toEqual([
        expect.objectContaining({
          action: 'admin.webhook.replay',
          data: expect.objectContaining({ outcome: 'failed', code: 'PROVIDER_EVENT_ACCOUNT_MISMATCH' }),
        }),
      ]);
    });

    it('refuses a refund when the subscription has no paid invoice (409, nothing written)', async () => {
      const srv = served.srv;
      const b = await owned(srv);
      await srv.store.billing.insert(
        billingRecord(b.projectId, b.accountId, {
          customerId: `cus_${unique('n')}`,
          subscriptionId: 'sub_unpaid_so_far',
          status: 'incomplete',
        }),
      );
      expectError(
        await op.post(`/api/admin/users/${b.accountId}/refund`, { projectId: b.projectId, reason: 'asked for it' }),
        409,
        'BILLING_PAID_INVOICE_REQUIRED',
      );
      expect(
        endpoint.requests.some(
          (r) =>
            r.startsWith('GET /v1/invoices?') &&
            r.includes('subscription=sub_unpaid_so_far') &&
            r.includes('status=paid'),
        ),
      ).toBe(true);
      expect(await srv.store.audit.find({ target: `board:${b.projectId}` })).toEqual([]);
      // Nor without a subscription at all.
      const bare = await owned(srv);
      expectError(
        await op.post(`/api/admin/users/${bare.accountId}/refund`, {
          projectId: bare.projectId,
          reason: 'asked for it',
        }),
        409,
        'BILLING_SUBSCRIPTION_REQUIRED',
      );
    });
  });

  describe(`a provider that cannot be reached, on the ${name} store`, () => {
    const email = operatorEmail();
    const served = serveStore(open, { OPERATOR_EMAILS: email, ...billingEnv('http://127.0.0.1:1') });

    it('answers 502 PROVIDER_UNAVAILABLE to re-read, refund and replay, with the billing records and the audit unchanged', async () => {
      const srv = served.srv;
      const { client: op } = await confirmedOperator(srv, email);
      const b = await owned(srv);
      await srv.store.billing.insert(
        billingRecord(b.projectId, b.accountId, {
          subscriptionId: 'sub_live',
          status: 'past_due',
          pastDueSince: Date.now() - DAY,
          priceId: PRICES.month,
          interval: 'month',
        }),
      );
      const billing = await srv.store.billing.get(b.projectId);
      const project = await srv.store.projects.get(b.projectId);
      const audit = await srv.store.audit.count({});
      expectError(
        await op.post(`/api/admin/users/${b.accountId}/subscription`, {
          projectId: b.projectId,
          reason: 'provider says otherwise',
        }),
        502,
        'PROVIDER_UNAVAILABLE',
      );
      expectError(
        await op.post(`/api/admin/users/${b.accountId}/refund`, {
          projectId: b.projectId,
          reason: 'double charge',
          amount: 100,
        }),
        502,
        'PROVIDER_UNAVAILABLE',
      );
      expectError(await op.post('/api/admin/webhooks/evt_1234/replay'), 502, 'PROVIDER_UNAVAILABLE');
      expect(await srv.store.billing.get(b.projectId)).toEqual(billing);
      expect(await srv.store.projects.get(b.projectId)).toEqual(project);
      expect(await srv.store.audit.count({})).toBe(audit);
      expect(await srv.store.billingEvents.count({ projectId: b.projectId })).toBe(0);
    });
  });
}
