// Restore points and the rewind preview over real HTTP (DOMAIN.md "Restore points and rewind"):
// captured on Pro boards before a batch and an operator's move, listed newest first, previewed
// as added, removed and changed items without writing anything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBoard, type TestBoard } from '../support/board.js';
import { signedUp, startTestServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';
import { billingRecord, deliverSigned } from '../support/billing.js';
import { unique } from '../support/temp.js';

const SECRET = 'whsec_rewind_tests';
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_WEBHOOK_SECRET: SECRET, STRIPE_PRICE_MONTHLY: 'price_m', STRIPE_PRICE_YEARLY: 'price_y', STRIPE_API_BASE: 'http://127.0.0.1:1' });
});
afterAll(async () => {
  await srv.stop();
});

/** Makes the board Pro the way production does: a signed subscription event for its customer. */
async function makePro(board: TestBoard): Promise<void> {
  const customer = `cus_${unique('rw')}`;
  const accountId = (await board.owner.get('/api/auth/me')).body.user.id as string;
  await srv.store.billing.insert(billingRecord(board.projectId, accountId, { customerId: customer }));
  const body = JSON.stringify({ id: `evt_${unique('rw')}`, object: 'event', type: 'customer.subscription.created', created: Math.floor(Date.now() / 1000), data: { object: { id: `sub_${customer}`, object: 'subscription', customer, status: 'active', cancel_at_period_end: false, metadata: { projectId: board.projectId }, items: { data: [{ price: { id: 'price_m' } }] } } } });
  const res = await deliverSigned(srv.url, body, SECRET);
  expect(res.status, res.text).toBe(200);
}

const rewindOf = (board: TestBoard, query = '') => board.owner.get(`/api/account/rewind?projectId=${board.projectId}${query}`);

describe('GET /api/account/rewind', () => {
  it('is 409 BILLING_PRO_REQUIRED on a Free board, which keeps no points', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('builder');
    await agent.post('/api/items/batch', { items: [{ title: 'free work' }] });
    expectError(await rewindOf(board), 409, 'BILLING_PRO_REQUIRED');
    expect(await srv.store.restorePoints.count({ boardId: board.projectId })).toBe(0);
  });

  it('lists the points captured before each batch and operator move, newest first, and previews one without writing', async () => {
    const board = await newBoard(srv.url);
    await makePro(board);
    const agent = await board.agent('builder');
    expect((await agent.post('/api/items/batch', { items: [{ title: 'schema' }, { title: 'api' }] })).status).toBe(201);
    expect((await agent.post('/api/items/batch', { items: [{ title: 'docs' }] })).status).toBe(201);
    expect((await board.owner.post(`/api/items/W-2/state?projectId=${board.projectId}`, { action: 'block', reason: 'waiting' })).status).toBe(200);

    const listed = await rewindOf(board);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.currentFingerprint).toMatch(/^sha256:[a-f0-9]{64}$/);
    expect(listed.body.points.map((p: { reason: string; itemCount: number }) => [p.reason, p.itemCount])).toEqual([
      ['state', 3],
      ['batch', 2],
      ['batch', 0],
    ]);
    for (const p of listed.body.points) expect(p.restorePointId).toMatch(new RegExp(`^rp_${board.projectId}_\\d+$`));

    // The point before the second batch: applying it would remove W-3 and unblock W-2.
    const before = (await board.owner.get(`/api/status?projectId=${board.projectId}`)).body.version;
    const second = listed.body.points[1].restorePointId as string;
    const preview = await rewindOf(board, `&restorePointId=${second}`);
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.preview).toMatchObject({ restorePointId: second, fingerprint: listed.body.points[1].fingerprint, added: [], removed: ['W-3'] });
    expect(preview.body.preview.changed).toEqual([{ workId: 'W-2', fields: expect.arrayContaining(['state', 'blockedReason']) }]);
    expect((await board.owner.get(`/api/status?projectId=${board.projectId}`)).body.version).toBe(before); // nothing written

    // A slice previews only its subtree.
    const slice = await rewindOf(board, `&restorePointId=${second}~W-2`);
    expect(slice.body.preview).toMatchObject({ added: [], removed: [], changed: [{ workId: 'W-2' }] });
  });

  it('answers INVALID_REWIND_POINT, INVALID_REWIND_SLICE, REWIND_POINT_NOT_FOUND, REWIND_SLICE_INTEGRITY and ROLE_REQUIRED', async () => {
    const board = await newBoard(srv.url);
    await makePro(board);
    const agent = await board.agent('builder');
    await agent.post('/api/items/batch', { items: [{ title: 'one' }] });
    await agent.post('/api/items/batch', { items: [{ title: 'two' }] });
    const points = (await rewindOf(board)).body.points as { restorePointId: string }[];
    const id = points[0]!.restorePointId;
    expectError(await rewindOf(board, '&restorePointId=not-a-point'), 400, 'INVALID_REWIND_POINT');
    expectError(await rewindOf(board, `&restorePointId=${'x'.repeat(182)}`), 400, 'INVALID_REWIND_POINT');
    expectError(await rewindOf(board, `&restorePointId=${id}~X-1`), 400, 'INVALID_REWIND_SLICE');
    expectError(await rewindOf(board, `&restorePointId=${id}~W-99`), 400, 'INVALID_REWIND_SLICE');
    expectError(await rewindOf(board, `&restorePointId=rp_${board.projectId}_99999`), 404, 'REWIND_POINT_NOT_FOUND');
    const other = await newBoard(srv.url);
    await makePro(other);
    await (await other.agent('x')).post('/api/items/batch', { items: [{ title: 'elsewhere' }] });
    const foreign = ((await rewindOf(other)).body.points as { restorePointId: string }[])[0]!.restorePointId;
    expectError(await rewindOf(board, `&restorePointId=${foreign}`), 404, 'REWIND_POINT_NOT_FOUND');
    // A point whose stored content was altered no longer matches its fingerprint.
    const stored = (await srv.store.restorePoints.get(id))!;
    await srv.store.restorePoints.update(id, stored.version, { content: stored.content.replace('"one"', '"tampered"') });
    expectError(await rewindOf(board, `&restorePointId=${id}`), 422, 'REWIND_SLICE_INTEGRITY');
    // Owner or admin only.
    const member = await signedUp(srv.url);
    await srv.store.members.insert({ _id: `${board.projectId}:${member.accountId}`, version: 1, projectId: board.projectId, accountId: member.accountId, role: 'member', acceptedAt: Date.now() });
    expectError(await member.client.get(`/api/account/rewind?projectId=${board.projectId}`), 403, 'ROLE_REQUIRED');
  });
});
