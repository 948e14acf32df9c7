// A Pro board deleted by its owner: its subscription must not outlive every way to end it (once the
// board is gone the portal answers 403). DOMAIN.md "Billing": "Account deletion cancels the
// account's live subscriptions first; provider unreachable: 502 PROVIDER_UNAVAILABLE and nothing
// deleted." Board deletion does the same for the board's subscription, and account deletion also
// finds the records that boards deleted before it left behind.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteProject } from '../../src/accounts/projects.js';
import { billingRecord, deliverSigned, makePro, webhookOnlyBilling } from '../support/billing.js';
import { unique } from '../support/temp.js';
import { expectError } from '../support/expect-error.js';
import { signedUp, startTestServer, type TestServer } from '../support/server.js';

const SECRET = 'whsec_board_delete';

/** A signed customer.subscription.created body: `sub` of `customer`, active, naming `projectId`. */
const createdEvent = (sub: string, customer: string, projectId: string) =>
  JSON.stringify({
    id: `evt_${unique('late')}`,
    object: 'event',
    type: 'customer.subscription.created',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: sub,
        object: 'subscription',
        customer,
        status: 'active',
        metadata: { projectId },
        items: { data: [{ price: { id: 'price_m' } }] },
      },
    },
  });

async function proBoard(srv: TestServer) {
  const user = await signedUp(srv.url);
  const projectId = (await user.client.get('/api/projects')).body.projects[0].projectId as string;
  await makePro(srv.url, srv.store, { owner: user.client, projectId }, SECRET);
  expect((await srv.store.projects.get(projectId))!.plan).toBe('pro');
  const deleteAccount = () =>
    user.client.request('DELETE', '/api/account', {
      json: { confirmEmail: user.email, currentPassword: user.password },
    });
  return { ...user, projectId, deleteAccount };
}

describe('deleting a Pro board, the provider unreachable', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer(webhookOnlyBilling(SECRET));
  });
  afterAll(async () => {
    await srv.stop();
  });

  it('answers 502 PROVIDER_UNAVAILABLE and deletes nothing: the subscription is still reachable', async () => {
    const { client, accountId, projectId, deleteAccount } = await proBoard(srv);
    expectError(await client.request('DELETE', `/api/projects/${projectId}`), 502, 'PROVIDER_UNAVAILABLE');
    expect((await srv.store.projects.get(projectId))!.plan).toBe('pro');
    expect(await srv.store.billing.get(projectId)).toMatchObject({ accountId, status: 'active' });
    expectError(await deleteAccount(), 502, 'PROVIDER_UNAVAILABLE');
  });

  it('answers 502 PROVIDER_UNAVAILABLE and deletes nothing while its open checkout cannot be expired', async () => {
    const user = await signedUp(srv.url);
    const projectId = (await user.client.get('/api/projects')).body.projects[0].projectId as string;
    // A Free board whose checkout is open at the provider: no subscription yet, but payable.
    await srv.store.billing.insert(
      billingRecord(projectId, user.accountId, { checkout: { sessionId: 'cs_open', priceId: 'price_m' } }),
    );
    expectError(await user.client.request('DELETE', `/api/projects/${projectId}`), 502, 'PROVIDER_UNAVAILABLE');
    expect(await srv.store.projects.get(projectId)).not.toBeNull();
    const gone = await user.client.request('DELETE', '/api/account', {
      json: { confirmEmail: user.email, currentPassword: user.password },
    });
    expectError(gone, 502, 'PROVIDER_UNAVAILABLE');
    expect((await srv.store.accounts.get(user.accountId))?.deletedAt ?? null).toBeNull();
  });

  it('still cancels (or refuses to forget) the subscription of a board deleted before', async () => {
    const { accountId, projectId, deleteAccount } = await proBoard(srv);
    // A board deleted before board deletion cancelled anything: its record left, still billed.
    await deleteProject(srv.store, projectId);
    expect(await srv.store.billing.get(projectId)).toMatchObject({ accountId, status: 'active' });
    const res = await deleteAccount();
    expect(res.status, `account deletion answered ${res.status} with a live subscription left uncancelled`).toBe(502);
    expect((await srv.store.accounts.get(accountId))?.deletedAt ?? null).toBeNull();
  });

  it('fails a delivery that names a deleted board while its subscription cannot be cancelled (500: delivered again)', async () => {
    const { projectId } = await proBoard(srv);
    const { customerId } = (await srv.store.billing.get(projectId))!;
    await deleteProject(srv.store, projectId);
    const res = await deliverSigned(srv.url, createdEvent('sub_paid_after', customerId, projectId), SECRET);
    expectError(res, 500, 'INTERNAL');
    expect(await srv.store.projects.get(projectId)).toBeNull();
  });
});

describe('deleting a Pro board, the provider answering', () => {
  const requests: string[] = [];
  /** What the provider lists as the customer's subscriptions. */
  let listed: Record<string, unknown>[] = [];
  const provider = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    const id = decodeURIComponent((req.url ?? '').split('/').pop() ?? '');
    const body =
      req.method === 'GET' && (req.url ?? '').startsWith('/v1/subscriptions?')
        ? { object: 'list', data: listed, has_more: false, url: '/v1/subscriptions' }
        : { id, object: 'subscription', status: 'canceled' };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  const subscription = (id: string, customer: string, projectId: string | null) => ({
    id,
    object: 'subscription',
    customer,
    status: 'active',
    metadata: projectId ? { projectId } : {},
    items: { object: 'list', data: [] },
  });
  let srv: TestServer;
  beforeAll(async () => {
    await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    srv = await startTestServer({ ...webhookOnlyBilling(SECRET), STRIPE_API_BASE: base });
  });
  afterAll(async () => {
    await srv.stop();
    await new Promise((r) => provider.close(r));
  });

  it('cancels the subscription first, then deletes the board; the account deletion has nothing left to cancel', async () => {
    const { client, projectId, deleteAccount } = await proBoard(srv);
    const { subscriptionId, customerId } = (await srv.store.billing.get(projectId))!;
    listed = [subscription(subscriptionId!, customerId, projectId)];
    expect((await client.request('DELETE', `/api/projects/${projectId}`)).status).toBe(204);
    expect(requests).toEqual([
      `GET /v1/subscriptions?customer=${customerId}&status=all&limit=10`,
      `DELETE /v1/subscriptions/${subscriptionId}`,
    ]);
    expect(await srv.store.projects.get(projectId)).toBeNull();
    expect(await srv.store.billing.get(projectId)).toMatchObject({ subscriptionId, status: 'canceled' });
    expect((await deleteAccount()).status).toBe(204);
    expect(requests).toHaveLength(2);
  });

  it('cancels every charging subscription of the board (two checkouts paid), none of another board', async () => {
    const { client, projectId } = await proBoard(srv);
    const { subscriptionId, customerId } = (await srv.store.billing.get(projectId))!;
    listed = [
      subscription('sub_second', customerId, projectId),
      subscription(subscriptionId!, customerId, projectId),
      subscription('sub_unnamed', customerId, null),
      subscription('sub_other_board', customerId, 'another-board'),
    ];
    requests.length = 0;
    expect((await client.request('DELETE', `/api/projects/${projectId}`)).status).toBe(204);
    expect(requests.filter((r) => r.startsWith('DELETE')).sort()).toEqual(
      ['sub_second', subscriptionId, 'sub_unnamed'].map((id) => `DELETE /v1/subscriptions/${id}`).sort(),
    );
  });

  it('cancels at once a subscription whose delivery names the board after its deletion, audited, the board not back', async () => {
    const { client, projectId } = await proBoard(srv);
    const { subscriptionId, customerId } = (await srv.store.billing.get(projectId))!;
    listed = [subscription(subscriptionId!, customerId, projectId)];
    expect((await client.request('DELETE', `/api/projects/${projectId}`)).status).toBe(204);
    // A checkout session left open was paid after the deletion.
    listed = [subscription('sub_paid_after', customerId, projectId)];
    requests.length = 0;
    const res = await deliverSigned(srv.url, createdEvent('sub_paid_after', customerId, projectId), SECRET);
    expect(res.status, res.text).toBe(200);
    expect(requests.filter((r) => r.startsWith('DELETE'))).toEqual(['DELETE /v1/subscriptions/sub_paid_after']);
    expect(await srv.store.projects.get(projectId)).toBeNull();
    const rows = await srv.store.audit.find({ projectId, action: 'billing.subscription.cancel' });
    expect(rows.map((r) => r.data.subscriptionId)).toEqual(['sub_paid_after']);
  });
});
