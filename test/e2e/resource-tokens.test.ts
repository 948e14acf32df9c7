// A resource token naming work ids does the whole lifecycle on those items over real HTTP (claim,
// renew, release, progress, submit), and its pull-next picks among them only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { head, newBoard, type TestBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

async function resourceToken(board: TestBoard, resources: string[]): Promise<Client> {
  const res = await board.owner.post('/api/accounts/tokens', {
    name: 'narrow',
    scope: 'resource',
    projectId: board.projectId,
    resources,
  });
  expect(res.status).toBe(201);
  return new Client(srv.url, { authorization: `Bearer ${res.body.secret}` });
}

describe('a resource token covering work ids', () => {
  it('claims, renews, progresses, releases and submits its items', async () => {
    const board = await newBoard(srv.url);
    const planner = await board.agent('planner');
    await planner.post('/api/items/batch', {
      items: [{ title: 'not mine' }, { title: 'mine' }, { title: 'also mine' }],
    });
    const narrow = await resourceToken(board, ['W-2', 'W-3']);

    const lease = await narrow.post('/api/claim', { workId: 'W-2' });
    expect(lease.status).toBe(200);
    const renewed = await narrow.post('/api/lease', { leaseId: lease.body.leaseId, action: 'renew' });
    expect(renewed.status).toBe(200);
    expect(renewed.body).toMatchObject({ workId: 'W-2', action: 'renew', lease: { leaseId: lease.body.leaseId } });
    const progressed = await narrow.post('/api/items/W-2/progress', { leaseId: lease.body.leaseId, note: 'half way' });
    expect(progressed.status).toBe(200);
    const released = await narrow.post('/api/lease', { leaseId: lease.body.leaseId, action: 'release' });
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ workId: 'W-2', action: 'release', lease: null });
    expect((await planner.get('/api/items/W-2')).body.state).toBe('ready');

    const again = await narrow.post('/api/claim', { workId: 'W-2' });
    const submitted = await narrow.post('/api/submit', { leaseId: again.body.leaseId, head: head(2) });
    expect(submitted.status).toBe(200);
    expect(submitted.body).toEqual({ workId: 'W-2', state: 'done' });

    expectError(await narrow.post('/api/claim', { workId: 'W-1' }), 403, 'PROJECT_SCOPE_DENIED');
  });

  it('pulls the next ready item among its own only, and hears NOTHING_READY when none of them is', async () => {
    const board = await newBoard(srv.url);
    const planner = await board.agent('planner');
    await planner.post('/api/items/batch', {
      items: [{ title: 'not mine' }, { title: 'mine, later' }, { title: 'mine, first' }, { title: 'not mine either' }],
    });
    const admin = await board.agent('operator', 'admin');
    expect((await admin.post('/api/items/reorder', { workIds: ['W-4', 'W-3'] })).status).toBe(200);
    const narrow = await resourceToken(board, ['W-2', 'W-3']);

    const first = await narrow.post('/api/claim', {});
    expect(first.status).toBe(200);
    expect(first.body.workId).toBe('W-3'); // W-4 heads the chain, but is not this token's
    expect((await narrow.post('/api/claim', {})).body).toEqual(first.body); // a repeated pull-next returns the held lease
    await narrow.post('/api/submit', { leaseId: first.body.leaseId, head: head(3) });

    const second = await narrow.post('/api/claim', {});
    expect(second.body.workId).toBe('W-2');
    await narrow.post('/api/submit', { leaseId: second.body.leaseId, head: head(2) });

    expectError(await narrow.post('/api/claim', {}), 409, 'NOTHING_READY');
    expect((await planner.get('/api/status')).body.counts).toMatchObject({ ready: 2, done: 2 });
  });

  it('keeps a token without work ids to its groups', async () => {
    const board = await newBoard(srv.url);
    const planner = await board.agent('planner');
    await planner.post('/api/items', { title: 'anything' });
    const claims = await resourceToken(board, ['claims']);
    expect((await claims.post('/api/claim', {})).body.workId).toBe('W-1');
    const shouts = await resourceToken(board, ['shouts']);
    expectError(await shouts.post('/api/claim', {}), 403, 'PROJECT_SCOPE_DENIED');
    expectError(await shouts.post('/api/lease', { leaseId: 'lease_x', action: 'renew' }), 403, 'PROJECT_SCOPE_DENIED');
    expectError(await shouts.post('/api/submit', { leaseId: 'lease_x', head: head(1) }), 403, 'PROJECT_SCOPE_DENIED');
  });
});
