// One open checkout session per board: two opened before either was paid, and both paid, made two
// subscriptions for one board. A second checkout while the board's session is open answers that
// session (same interval), or expires it at the provider and opens another (other interval); two
// nodes asked at once open one between them.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { modify, type Store } from '../../store/ports/store.js';
import { billingRecord } from '../support/billing.js';
import { newBoard } from '../support/board.js';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { tempDir } from '../support/temp.js';

const PRICES = { month: 'price_pro_monthly', year: 'price_pro_yearly' };
const billingEnv = (apiBase: string) => ({
  STRIPE_SECRET_KEY: 'sk_test_123',
  STRIPE_WEBHOOK_SECRET: 'whsec_x',
  STRIPE_PRICE_MONTHLY: PRICES.month,
  STRIPE_PRICE_YEARLY: PRICES.year,
  STRIPE_API_BASE: apiBase,
});

interface Session {
  id: string;
  price: string;
  status: 'open' | 'complete' | 'expired';
  url: string;
  subscription?: string;
}

/**
 * A provider that keeps the checkout sessions it opens: retrieved and expired as Stripe does (one it
 * does not hold: 404 resource_missing), opened after `openDelayMs`; `beforeExpire` runs as an
 * expire arrives (the customer paying at that moment). `forbidden`: its sessions refused to a key
 * without the permission (403), as Stripe refuses a restricted key.
 */
function sessionProvider() {
  const sessions = new Map<string, Session>();
  /** Subscriptions' statuses by id. */
  const subscriptions = new Map<string, string>();
  const state = { openDelayMs: 0, customers: 0, forbidden: false };
  const hooks: { beforeExpire?: (s: Session) => void } = {};
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      const send = (status: number, answer: unknown, delayMs = 0) =>
        setTimeout(
          () => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer)),
          delayMs,
        );
      const refuse = (message: string) => send(400, { error: { type: 'invalid_request_error', message } });
      if (req.method === 'POST' && path === '/v1/customers')
        return send(200, { id: `cus_open_${++state.customers}`, object: 'customer' });
      if (req.method === 'POST' && path === '/v1/checkout/sessions') {
        const id = `cs_${sessions.size + 1}`;
        const price = new URLSearchParams(body).get('line_items[0][price]') ?? '';
        const session: Session = { id, price, status: 'open', url: `https://checkout.test/pay/${id}` };
        sessions.set(id, session);
        return send(200, { ...session, object: 'checkout.session' }, state.openDelayMs);
      }
      const sub = /^\/v1\/subscriptions\/([^/]+)$/.exec(path)?.[1];
      if (sub && subscriptions.has(sub))
        return send(200, { id: sub, object: 'subscription', customer: 'cus_open_1', status: subscriptions.get(sub) });
      const [, id, action] = /^\/v1\/checkout\/sessions\/([^/]+)(\/expire)?$/.exec(path) ?? [];
      if (id && state.forbidden)
        return send(403, {
          error: { type: 'invalid_request_error', message: 'The key lacks rak_checkout_session_write.' },
        });
      const session = id ? sessions.get(id) : undefined;
      if (!session)
        return send(404, {
          error: {
            type: 'invalid_request_error',
            code: 'resource_missing',
            param: 'session',
            message: `No such checkout.session: '${id}'`,
          },
        });
      if (action) {
        hooks.beforeExpire?.(session);
        if (session.status !== 'open') return refuse('Only open sessions can be expired');
        session.status = 'expired';
      }
      return send(200, { ...session, object: 'checkout.session', url: session.status === 'open' ? session.url : null });
    });
  });
  return {
    sessions,
    subscriptions,
    state,
    hooks,
    open: () => [...sessions.values()].filter((s) => s.status === 'open'),
    /** The session paid: complete, its subscription (active) made; the subscription's id. */
    pay: (session: Session): string => {
      const subscription = `sub_${session.id}`;
      Object.assign(session, { status: 'complete', subscription });
      subscriptions.set(subscription, 'active');
      return subscription;
    },
    listen: async () => {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('a board’s open checkout session', () => {
  const provider = sessionProvider();
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer(billingEnv(await provider.listen()));
  });
  afterAll(async () => {
    await srv.stop();
    await provider.close();
  });
  /** A checkout of `b` by its owner, at an interval. */
  const checkoutOn = (b: { owner: Client; projectId: string }) => (interval: string) =>
    b.owner.post(`/api/account/billing/checkout?projectId=${b.projectId}`, { interval });

  it('is answered again at the same interval, expired for another, and replaced once no longer open', async () => {
    const b = await newBoard(srv.url);
    const checkout = checkoutOn(b);
    const first = await checkout('month');
    expect(first.status, first.text).toBe(201);
    const again = await checkout('month');
    expect(again.status, again.text).toBe(201);
    expect(again.body.url, 'a second checkout opened another session beside the open one').toBe(first.body.url);
    expect(provider.sessions.size).toBe(1);

    const yearly = await checkout('year');
    expect(yearly.status, yearly.text).toBe(201);
    expect(yearly.body.url).not.toBe(first.body.url);
    expect(provider.open().map((s) => [s.url, s.price])).toEqual([[yearly.body.url, PRICES.year]]);

    // The session lapsed at the provider (or was paid): the next checkout opens a new one.
    provider.open()[0]!.status = 'expired';
    const fresh = await checkout('year');
    expect(fresh.status, fresh.text).toBe(201);
    expect(fresh.body.url).not.toBe(yearly.body.url);
    expect(provider.open().map((s) => s.url)).toEqual([fresh.body.url]);
  });

  it('once paid, refuses another until the subscription it made has ended', async () => {
    const b = await newBoard(srv.url);
    const checkout = checkoutOn(b);
    const first = await checkout('month');
    expect(first.status, first.text).toBe(201);
    // Paid; its deliveries not here yet (or lost).
    const paid = provider.open().find((s) => s.url === first.body.url)!;
    const subscription = provider.pay(paid);
    const sessions = provider.sessions.size;
    const again = await checkout('year');
    expect(again.status, `a paid checkout's board got another session: ${again.text}`).toBe(409);
    expect(again.body.error.code).toBe('BILLING_SUBSCRIPTION_CONFLICT');
    expect(provider.sessions.size).toBe(sessions);
    // That subscription ended (its deliveries lost): a new checkout is the way back to Pro.
    provider.subscriptions.set(subscription, 'incomplete_expired');
    const after = await checkout('year');
    expect(after.status, after.text).toBe(201);
    expect(provider.open().map((s) => s.url)).toContain(after.body.url);
    expect(provider.sessions.size).toBe(sessions + 1);
  });

  it('paid just as a checkout at the other interval expires it, refuses the new session', async () => {
    const b = await newBoard(srv.url);
    const checkout = checkoutOn(b);
    const first = await checkout('month');
    expect(first.status, first.text).toBe(201);
    // The owner pays the monthly session in its tab just as the yearly checkout expires it.
    provider.hooks.beforeExpire = (s) => {
      if (s.status === 'open') provider.pay(s);
    };
    const sessions = provider.sessions.size;
    const yearly = await checkout('year').finally(() => (provider.hooks.beforeExpire = undefined));
    expect(yearly.status, `a second session was opened beside the paid one: ${yearly.text}`).toBe(409);
    expect(yearly.body.error.code).toBe('BILLING_SUBSCRIPTION_CONFLICT');
    expect(provider.sessions.size).toBe(sessions);
  });
  it('paid, its subscription recorded but not yet as live (incomplete), refuses another', async () => {
    const b = await newBoard(srv.url);
    const checkout = checkoutOn(b);
    const first = await checkout('month');
    expect(first.status, first.text).toBe(201);
    // Paid: Stripe's customer.subscription.created (status incomplete, sent before the first invoice
    // is paid) has arrived; its customer.subscription.updated (active) is still on its way.
    const paid = provider.open().find((s) => s.url === first.body.url)!;
    const subscription = provider.pay(paid);
    await modify(srv.store.billing, b.projectId, () => ({ subscriptionId: subscription, status: 'incomplete' }));
    const sessions = provider.sessions.size;
    const again = await checkout('year');
    expect(again.status, `a paid checkout's board got another session: ${again.text}`).toBe(409);
    expect(again.body.error.code).toBe('BILLING_SUBSCRIPTION_CONFLICT');
    expect(provider.sessions.size).toBe(sessions);
  });
  it('is expired when its board is deleted, and when its account is', async () => {
    const user = await signedUp(srv.url);
    const boards = [(await user.client.get('/api/projects')).body.projects[0].projectId as string];
    const made = await user.client.post('/api/projects', { name: 'second' });
    expect(made.status, made.text).toBe(201);
    boards.push(made.body.projectId);
    const urls: string[] = [];
    for (const projectId of boards) {
      const res = await user.client.post(`/api/account/billing/checkout?projectId=${projectId}`, { interval: 'month' });
      expect(res.status, res.text).toBe(201);
      urls.push(res.body.url);
    }
    const [onBoard, onAccount] = urls.map((url) => [...provider.sessions.values()].find((s) => s.url === url)!);
    expect((await user.client.request('DELETE', `/api/projects/${boards[0]}`)).status).toBe(204);
    // The board is gone; its session, left open, could still be paid in the owner's tab.
    expect(onBoard!.status, 'the deleted board’s checkout is still payable').toBe('expired');
    expect(onAccount!.status).toBe('open');
    const gone = await user.client.request('DELETE', '/api/account', {
      json: { confirmEmail: user.email, currentPassword: user.password },
    });
    expect(gone.status, gone.text).toBe(204);
    expect(onAccount!.status, 'the deleted account’s checkout is still payable').toBe('expired');
  });

  it('is forgotten once the provider no longer knows it (its keys changed): checkout and deletions go on', async () => {
    const user = await signedUp(srv.url);
    const [first] = (await user.client.get('/api/projects')).body.projects as { projectId: string }[];
    const made = await user.client.post('/api/projects', { name: 'second' });
    expect(made.status, made.text).toBe(201);
    const boards = [first!.projectId, made.body.projectId as string];
    // Sessions opened under the keys used before: Stripe answers 404 resource_missing for them now.
    const unknown = { sessionId: 'cs_of_the_old_keys', priceId: PRICES.month };
    for (const projectId of boards)
      await srv.store.billing.insert(billingRecord(projectId, user.accountId, { checkout: unknown }));
    const checkout = await user.client.post(`/api/account/billing/checkout?projectId=${boards[0]}`, {
      interval: 'month',
    });
    expect(checkout.status, checkout.text).toBe(201);
    expect(provider.open().map((s) => s.url)).toContain(checkout.body.url);

    // Any other refusal still stops the deletion, nothing deleted.
    provider.state.forbidden = true;
    const refused = await user.client.request('DELETE', `/api/projects/${boards[1]}`);
    provider.state.forbidden = false;
    expect(refused.status, refused.text).toBe(502);
    expect(refused.body.error.code).toBe('PROVIDER_REQUEST_FAILED');
    expect(await srv.store.projects.get(boards[1]!)).not.toBeNull();
    expect((await srv.store.billing.get(boards[1]!))!.checkout).toEqual(unknown);

    const deleted = await user.client.request('DELETE', `/api/projects/${boards[1]}`);
    expect(deleted.status, deleted.text).toBe(204);
    expect(await srv.store.projects.get(boards[1]!)).toBeNull();
    expect((await srv.store.billing.get(boards[1]!))!.checkout).toBeNull();

    await modify(srv.store.billing, boards[0]!, () => ({ checkout: unknown }));
    const gone = await user.client.request('DELETE', '/api/account', {
      json: { confirmEmail: user.email, currentPassword: user.password },
    });
    expect(gone.status, gone.text).toBe(204);
    expect((await srv.store.accounts.get(user.accountId))!.deletedAt).not.toBeNull();
  });
});

describe('two nodes asked for a checkout of one board at once', () => {
  const provider = sessionProvider();
  let store: Store;
  let remove: () => Promise<void>;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    const dir = await tempDir();
    remove = dir.remove;
    store = await openEmbeddedStore(dir.path);
    const base = await provider.listen();
    a = await startTestServer(billingEnv(base), store);
    b = await startTestServer(billingEnv(base), store);
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
    await store.close();
    await remove();
    await provider.close();
  });

  it('answer one session between them, the other one opened expired', async () => {
    const board = await newBoard(a.url);
    const accountId = (await board.owner.get('/api/auth/me')).body.user.id as string;
    await store.billing.insert(billingRecord(board.projectId, accountId));
    const onB = new Client(b.url);
    onB.cookies = board.owner.cookies;
    onB.csrfToken = board.owner.csrfToken;
    // Both find no session recorded before either has opened one.
    provider.state.openDelayMs = 200;
    const path = `/api/account/billing/checkout?projectId=${board.projectId}`;
    const answers = await Promise.all([board.owner, onB].map((c) => c.post(path, { interval: 'month' })));
    expect(answers.map((r) => r.status)).toEqual([201, 201]);
    expect(answers[1]!.body.url).toBe(answers[0]!.body.url);
    expect(provider.open().map((s) => s.url)).toEqual([answers[0]!.body.url]);
    expect((await store.billing.get(board.projectId))!.checkout).toEqual({
      sessionId: provider.open()[0]!.id,
      priceId: PRICES.month,
    });
  });
});
