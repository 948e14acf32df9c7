// Checkout, portal, annual and account deletion over real HTTP against stripe-mock (contract Part 4
// "Billing", DOMAIN.md), and a provider that is down or answers garbage.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';
import { billingRecord as record } from '../support/billing.js';

const stripeBase = inject('stripeBase');
const PRICES = { month: 'price_pro_monthly', year: 'price_pro_yearly' };
const billingEnv = (apiBase: string) => ({
  STRIPE_SECRET_KEY: 'sk_test_123',
  STRIPE_WEBHOOK_SECRET: 'whsec_x',
  STRIPE_PRICE_MONTHLY: PRICES.month,
  STRIPE_PRICE_YEARLY: PRICES.year,
  STRIPE_API_BASE: apiBase,
});

/** A local HTTP server standing in for the provider: counts requests and answers with `answer`. */
async function fakeProvider(
  answer: (path: string) => { status: number; body: string; delayMs?: number },
): Promise<{ url: string; requests: string[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    const { status, body, delayMs = 0 } = answer(req.url ?? '');
    setTimeout(() => res.writeHead(status, { 'content-type': 'application/json' }).end(body), delayMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

async function owned(srv: TestServer) {
  const board = await newBoard(srv.url);
  const accountId = (await board.owner.get('/api/auth/me')).body.user.id as string;
  return { ...board, accountId, q: `?projectId=${board.projectId}` };
}

describe.skipIf(!stripeBase)('checkout, portal and annual (stripe-mock)', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer(billingEnv(stripeBase!));
  });
  afterAll(async () => {
    await srv.stop();
  });

  it('checkout attaches a customer first, answers a hosted URL with the nine headers, and reuses the customer', async () => {
    const b = await owned(srv);
    const res = await b.owner.post(`/api/account/billing/checkout${b.q}`, { interval: 'month' });
    expect(res.status, res.text).toBe(201);
    expect(res.body.url).toMatch(/^https?:\/\//);
    expect(res.headers.get('x-ratelimit-write-remaining')).toMatch(/^\d+$/);
    const attached = (await srv.store.billing.get(b.projectId))!;
    expect(attached).toMatchObject({ accountId: b.accountId, customerId: expect.stringMatching(/^cus_/) });
    expect((await b.owner.post(`/api/account/billing/checkout${b.q}`, { interval: 'year' })).status).toBe(201);
    expect((await srv.store.billing.get(b.projectId))!.customerId).toBe(attached.customerId);
  });

  it('refuses a bad interval before drawing on the budget, a missing one as INVALID_INPUT, a member, and a second live subscription', async () => {
    const b = await owned(srv);
    const remaining = async () =>
      Number((await b.owner.get(`/api/status${b.q}`)).headers.get('x-ratelimit-write-remaining'));
    const before = await remaining();
    expectError(
      await b.owner.post(`/api/account/billing/checkout${b.q}`, { interval: 'week' }),
      400,
      'INVALID_BILLING_INTERVAL',
    );
    expectError(await b.owner.post(`/api/account/billing/checkout${b.q}`, {}), 400, 'INVALID_INPUT');
    expect(await remaining()).toBe(before);
    expect(await srv.store.billing.get(b.projectId)).toBeNull();
    const member = await signedUp(srv.url);
    await srv.store.members.insert({
      _id: `${b.projectId}:${member.accountId}`,
      version: 1,
      projectId: b.projectId,
      accountId: member.accountId,
      role: 'admin',
      acceptedAt: Date.now(),
    });
    expectError(
      await member.client.post(`/api/account/billing/checkout${b.q}`, { interval: 'month' }),
      403,
      'PROJECT_SCOPE_DENIED',
    );
    await srv.store.billing.insert(
      record(b.projectId, b.accountId, {
        subscriptionId: 'sub_live',
        status: 'active',
        priceId: PRICES.month,
        interval: 'month',
      }),
    );
    expectError(
      await b.owner.post(`/api/account/billing/checkout${b.q}`, { interval: 'year' }),
      409,
      'BILLING_SUBSCRIPTION_CONFLICT',
    );
  });

  it('denies checkout with 429 once the board bucket is spent, with no mutation and no provider call', async () => {
    const b = await owned(srv);
    // The shared bucket is the account user's write budget (Free: 120 a minute): spend it, in a
    // window held still.
    srv.holdBudgets();
    let spent = false;
    for (let i = 0; i < 121 && !spent; i++)
      spent = (await b.owner.post(`/api/shouts${b.q}`, { text: `spend ${i}` })).status === 429;
    expect(spent).toBe(true);
    const denied = await b.owner.post(`/api/account/billing/checkout${b.q}`, { interval: 'month' });
    expectError(denied, 429, 'RATE_LIMITED');
    expect(denied.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await srv.store.billing.get(b.projectId)).toBeNull(); // the customer would have been attached first
    await srv.store.billing.insert(record(b.projectId, b.accountId));
    expectError(await b.owner.post(`/api/account/billing/portal${b.q}`), 429, 'RATE_LIMITED'); // the same bucket
  });

  it('portal needs a customer (409, nothing created) and answers a hosted URL with one', async () => {
    const b = await owned(srv);
    expectError(await b.owner.post(`/api/account/billing/portal${b.q}`), 409, 'BILLING_CUSTOMER_REQUIRED');
    expect(await srv.store.billing.get(b.projectId)).toBeNull();
    await srv.store.billing.insert(record(b.projectId, b.accountId));
    const res = await b.owner.post(`/api/account/billing/portal${b.q}`);
    expect(res.status, res.text).toBe(201);
    expect(res.body.url).toMatch(/^https?:\/\//);
  });

  it('annual answers each refusal in the order DOMAIN.md gives, then moves a monthly Pro subscription to yearly', async () => {
    const b = await owned(srv);
    const annual = () => b.owner.post(`/api/account/billing/annual${b.q}`);
    expectError(await annual(), 409, 'BILLING_SUBSCRIPTION_REQUIRED');
    await srv.store.billing.insert(
      record(b.projectId, b.accountId, { subscriptionId: 'sub_123', status: 'canceled', priceId: PRICES.month }),
    );
    const set = async (changes: Record<string, unknown>) => {
      const current = (await srv.store.billing.get(b.projectId))!;
      await srv.store.billing.update(b.projectId, current.version, changes);
    };
    expectError(await annual(), 409, 'BILLING_PRO_REQUIRED');
    await set({ status: 'past_due', pastDueSince: Date.now() - 1000 });
    expectError(await annual(), 409, 'BILLING_SUBSCRIPTION_CONFLICT');
    await set({ status: 'active', pastDueSince: null, priceId: 'price_someone_elses' });
    expectError(await annual(), 409, 'BILLING_INTERVAL_UNSUPPORTED');
    await set({ priceId: PRICES.month, interval: 'month' });
    const moved = await annual();
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toEqual({ changed: true });
    expect((await srv.store.billing.get(b.projectId))!).toMatchObject({ priceId: PRICES.year, interval: 'year' });
  });
});

describe('a provider that is down, or answers garbage', () => {
  let garbage: Awaited<ReturnType<typeof fakeProvider>>;
  let down: TestServer;
  let odd: TestServer;
  beforeAll(async () => {
    garbage = await fakeProvider(() => ({ status: 200, body: '{}' }));
    [down, odd] = await Promise.all([
      startTestServer(billingEnv('http://127.0.0.1:1')),
      startTestServer(billingEnv(garbage.url)),
    ]);
  });
  afterAll(async () => {
    await Promise.all([down.stop(), odd.stop(), garbage.close()]);
  });

  it('maps an unreachable provider to 502 PROVIDER_UNAVAILABLE and an unusable answer to 502 PROVIDER_RESPONSE_INVALID, attaching nothing', async () => {
    const a = await owned(down);
    expectError(
      await a.owner.post(`/api/account/billing/checkout${a.q}`, { interval: 'month' }),
      502,
      'PROVIDER_UNAVAILABLE',
    );
    expect(await down.store.billing.get(a.projectId)).toBeNull();
    const b = await owned(odd);
    expectError(
      await b.owner.post(`/api/account/billing/checkout${b.q}`, { interval: 'month' }),
      502,
      'PROVIDER_RESPONSE_INVALID',
    );
    expect(await odd.store.billing.get(b.projectId)).toBeNull();
  });

  it('answers annual with 502 when the provider cannot move the price, changing nothing', async () => {
    const a = await owned(down);
    await down.store.billing.insert(
      record(a.projectId, a.accountId, {
        subscriptionId: 'sub_m',
        status: 'active',
        priceId: PRICES.month,
        interval: 'month',
      }),
    );
    expectError(await a.owner.post(`/api/account/billing/annual${a.q}`), 502, 'PROVIDER_UNAVAILABLE');
    expect((await down.store.billing.get(a.projectId))!).toMatchObject({ priceId: PRICES.month, interval: 'month' });
  });

  it('leaves exactly one customer attached when two checkouts race: the other is 409 BILLING_CUSTOMER_CONFLICT', async () => {
    // A provider slow to create customers, so both requests find the board without one.
    let customers = 0;
    const slow = await fakeProvider((path) =>
      path.startsWith('/v1/customers')
        ? { status: 200, body: JSON.stringify({ id: `cus_race_${++customers}`, object: 'customer' }), delayMs: 300 }
        : {
            status: 200,
            body: JSON.stringify({
              id: 'cs_1',
              object: 'checkout.session',
              url: 'https://checkout.stripe.com/c/pay/cs_1',
            }),
          },
    );
    const srv = await startTestServer(billingEnv(slow.url));
    try {
      const b = await owned(srv);
      const answers = await Promise.all(
        [0, 1].map(() => b.owner.post(`/api/account/billing/checkout${b.q}`, { interval: 'month' })),
      );
      expect(answers.map((r) => r.status).sort()).toEqual([201, 409]);
      expect(answers.find((r) => r.status === 409)!.body.error.code).toBe('BILLING_CUSTOMER_CONFLICT');
      expect(customers).toBe(2);
      expect(await srv.store.billing.count({ _id: b.projectId })).toBe(1);
    } finally {
      await srv.stop();
      await slow.close();
    }
  });

  it('still answers GET billing when only the interval refresh fails', async () => {
    const a = await owned(down);
    await down.store.billing.insert(
      record(a.projectId, a.accountId, { subscriptionId: 'sub_x', status: 'active', priceId: null, interval: null }),
    );
    const res = await a.owner.get(`/api/account/billing${a.q}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ plan: 'pro', subscription: { status: 'active', interval: null } });
  });

  it('keeps an account with a live subscription when the provider cannot cancel it (502, nothing deleted)', async () => {
    const { client, email, password, accountId } = await signedUp(down.url);
    const projectId = (await client.get('/api/projects')).body.projects[0].projectId as string;
    await down.store.billing.insert(
      record(projectId, accountId, { subscriptionId: 'sub_live', status: 'active', priceId: PRICES.month }),
    );
    expectError(
      await client.request('DELETE', '/api/account', { json: { confirmEmail: email, currentPassword: password } }),
      502,
      'PROVIDER_UNAVAILABLE',
    );
    expect(await down.store.accounts.get(accountId)).not.toBeNull();
    expect((await down.store.accounts.get(accountId))?.deletedAt ?? null).toBeNull();
    expect(await down.store.projects.get(projectId)).not.toBeNull();
  });

  it('never calls the provider when the subscription is already yearly', async () => {
    const counted = await fakeProvider(() => ({ status: 500, body: '{}' }));
    const srv = await startTestServer(billingEnv(counted.url));
    try {
      const b = await owned(srv);
      await srv.store.billing.insert(
        record(b.projectId, b.accountId, {
          subscriptionId: 'sub_y',
          status: 'active',
          priceId: PRICES.year,
          interval: 'year',
        }),
      );
      const res = await b.owner.post(`/api/account/billing/annual${b.q}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ changed: false });
      expect(counted.requests).toEqual([]);
    } finally {
      await srv.stop();
      await counted.close();
    }
  });
});

describe('GET billing’s interval refresh', () => {
  it('asks the provider once, not on every read: once for a price it does not name, once a minute when it fails', async () => {
    const subscription = {
      id: 'sub_legacy',
      object: 'subscription',
      customer: 'cus_legacy',
      status: 'active',
      items: { data: [{ price: { id: 'price_legacy_2024' } }] },
    };
    const refusal = {
      error: { type: 'invalid_request_error', message: 'No such subscription', code: 'resource_missing' },
    };
    const provider = await fakeProvider((path) =>
      path.includes('sub_legacy')
        ? { status: 200, body: JSON.stringify(subscription) }
        : { status: 400, body: JSON.stringify(refusal) },
    );
    const srv = await startTestServer(billingEnv(provider.url));
    try {
      const legacy = await owned(srv);
      await srv.store.billing.insert(
        record(legacy.projectId, legacy.accountId, { subscriptionId: 'sub_legacy', status: 'active' }),
      );
      for (let i = 0; i < 3; i++) {
        const res = await legacy.owner.get(`/api/account/billing${legacy.q}`);
        expect(res.body).toMatchObject({ plan: 'pro', subscription: { status: 'active', interval: null } });
      }
      expect(provider.requests.filter((r) => r.includes('/v1/subscriptions/'))).toEqual([
        'GET /v1/subscriptions/sub_legacy',
      ]);
      expect(await srv.store.billing.get(legacy.projectId)).toMatchObject({
        priceId: 'price_legacy_2024',
        interval: null,
      });

      const refused = await owned(srv);
      await srv.store.billing.insert(
        record(refused.projectId, refused.accountId, { subscriptionId: 'sub_gone', status: 'active' }),
      );
      for (let i = 0; i < 3; i++)
        expect((await refused.owner.get(`/api/account/billing${refused.q}`)).status).toBe(200);
      expect(provider.requests.filter((r) => r.includes('sub_gone'))).toHaveLength(1);
    } finally {
      await srv.stop();
      await provider.close();
    }
  });
});

describe('GET billing’s upgrade prices', () => {
  it('show what the provider’s prices charge, asked once; the configured ones while it does not say', async () => {
    const price = (id: string, amount: number, currency = 'usd') =>
      JSON.stringify({ id, object: 'price', currency, unit_amount: amount });
    const answers = new Map([
      [PRICES.month, { status: 200, body: price(PRICES.month, 1500) }],
      [PRICES.year, { status: 200, body: price(PRICES.year, 15000) }],
    ]);
    const provider = await fakeProvider(
      (path) =>
        answers.get(path.split('/').pop()!) ?? { status: 400, body: JSON.stringify({ error: { type: 'api_error' } }) },
    );
    const configured = { REVENUE_PRO_MONTHLY_USD: '12', REVENUE_PRO_YEARLY_USD: '120' };
    const prices = (res: { body: { upgradeOptions: { priceUsd: number | null }[] } }) =>
      res.body.upgradeOptions.map((o) => o.priceUsd);
    const srv = await startTestServer({ ...billingEnv(provider.url), ...configured });
    try {
      const b = await owned(srv);
      for (let i = 0; i < 3; i++) expect(prices(await b.owner.get(`/api/account/billing${b.q}`))).toEqual([15, 150]);
      expect(provider.requests.sort()).toEqual([`GET /v1/prices/${PRICES.month}`, `GET /v1/prices/${PRICES.year}`]);
    } finally {
      await srv.stop();
    }
    // The provider refuses (or is away): the configured prices, the provider asked again a minute later at the earliest.
    answers.clear();
    provider.requests.length = 0;
    const away = await startTestServer({ ...billingEnv(provider.url), ...configured });
    try {
      const b = await owned(away);
      for (let i = 0; i < 3; i++) expect(prices(await b.owner.get(`/api/account/billing${b.q}`))).toEqual([12, 120]);
      expect(provider.requests).toHaveLength(2);
    } finally {
      await away.stop();
      await provider.close();
    }
  });
});

describe.skipIf(!stripeBase)('account deletion with a subscription (stripe-mock)', () => {
  it('cancels the live subscription, then deletes (the account kept 30 days, closed)', async () => {
    const srv = await startTestServer(billingEnv(stripeBase!));
    try {
      const { client, email, password, accountId } = await signedUp(srv.url);
      const projectId = (await client.get('/api/projects')).body.projects[0].projectId as string;
      await srv.store.billing.insert(
        record(projectId, accountId, { subscriptionId: 'sub_live', status: 'active', priceId: PRICES.month }),
      );
      const res = await client.request('DELETE', '/api/account', {
        json: { confirmEmail: email, currentPassword: password },
      });
      expect(res.status, res.text).toBeLessThan(300);
      expect(await srv.store.accounts.get(accountId)).toMatchObject({
        deletedBy: 'owner',
        deletedAt: expect.any(Number),
      });
    } finally {
      await srv.stop();
    }
  });
});

describe('the codes every billing operation shares', () => {
  let srv: TestServer;
  let bare: TestServer;
  let refusing: Awaited<ReturnType<typeof fakeProvider>>;
  let refused: TestServer;
  beforeAll(async () => {
    refusing = await fakeProvider(() => ({
      status: 400,
      body: JSON.stringify({
        error: { type: 'invalid_request_error', message: 'No such price', code: 'resource_missing' },
      }),
    }));
    [srv, bare, refused] = await Promise.all([
      startTestServer(billingEnv('http://127.0.0.1:1')),
      startTestServer(),
      startTestServer(billingEnv(refusing.url)),
    ]);
  });
  afterAll(async () => {
    await Promise.all([srv.stop(), bare.stop(), refused.stop(), refusing.close()]);
  });

  const OPERATIONS = [
    ['POST', '/api/account/billing/checkout', { interval: 'month' }],
    ['POST', '/api/account/billing/portal', {}],
    ['POST', '/api/account/billing/annual', {}],
  ] as const;

  it.each(OPERATIONS)(
    '%s %s: INVALID_JSON, JSON_REQUIRED, BODY_TOO_LARGE, INVALID_PROJECT_ID, CSRF_REJECTED, UNAUTHENTICATED, PROJECT_REQUIRED',
    async (method, path, body) => {
      const b = await owned(srv);
      const raw = (data: string, headers: Record<string, string>) =>
        b.owner.request(method, `${path}${b.q}`, { raw: data, headers });
      expectError(await raw('{"interval":', { 'content-type': 'application/json' }), 400, 'INVALID_JSON');
      expectError(await raw(JSON.stringify(body), { 'content-type': 'text/plain' }), 415, 'JSON_REQUIRED');
      expectError(
        await raw(JSON.stringify({ pad: 'x'.repeat(300 * 1024) }), { 'content-type': 'application/json' }),
        413,
        'BODY_TOO_LARGE',
      );
      expectError(
        await b.owner.request(method, `${path}?projectId=${encodeURIComponent('not a project!')}`, { json: body }),
        400,
        'INVALID_PROJECT_ID',
      );
      expectError(
        await b.owner.request(method, `${path}${b.q}`, { json: body, headers: { 'x-csrf-token': 'forged' } }),
        403,
        'CSRF_REJECTED',
      );
      expectError(await new Client(srv.url).request(method, `${path}${b.q}`, { json: body }), 401, 'UNAUTHENTICATED');
      expect(
        (await b.owner.request('PATCH', '/api/account/profile', { json: { defaultProjectId: null } })).status,
      ).toBe(200);
      expectError(await b.owner.request(method, path, { json: body }), 409, 'PROJECT_REQUIRED');
    },
  );

  it('GET /api/account/billing: INVALID_PROJECT_ID, UNAUTHENTICATED, PROJECT_REQUIRED', async () => {
    const b = await owned(srv);
    expectError(
      await b.owner.get(`/api/account/billing?projectId=${encodeURIComponent('not a project!')}`),
      400,
      'INVALID_PROJECT_ID',
    );
    expectError(await new Client(srv.url).get(`/api/account/billing${b.q}`), 401, 'UNAUTHENTICATED');
    expect((await b.owner.request('PATCH', '/api/account/profile', { json: { defaultProjectId: null } })).status).toBe(
      200,
    );
    expectError(await b.owner.get('/api/account/billing'), 409, 'PROJECT_REQUIRED');
  });

  it('answers 503 BILLING_UNAVAILABLE for checkout, portal and annual when no provider is configured', async () => {
    const b = await owned(bare);
    for (const [method, path, body] of OPERATIONS)
      expectError(await b.owner.request(method, `${path}${b.q}`, { json: body }), 503, 'BILLING_UNAVAILABLE');
    expect((await b.owner.get(`/api/account/billing${b.q}`)).body.providerAvailable).toBe(false);
  });

  it('maps a request the provider refuses to 502 PROVIDER_REQUEST_FAILED', async () => {
    const b = await owned(refused);
    expectError(
      await b.owner.post(`/api/account/billing/checkout${b.q}`, { interval: 'month' }),
      502,
      'PROVIDER_REQUEST_FAILED',
    );
    await refused.store.billing.insert(record(b.projectId, b.accountId));
    expectError(await b.owner.post(`/api/account/billing/portal${b.q}`), 502, 'PROVIDER_REQUEST_FAILED');
  });
});
