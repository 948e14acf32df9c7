// Only done satisfies a dependency (DOMAIN.md): an item whose dependency left done, or gained one
// not done, while it was held or awaiting its verdict goes back to pending when that ends, never
// to ready where pull-next would hand it out. Over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest, head, newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { until } from '../support/until.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ BOARD_RATE_SCALE: '100' });
});
afterAll(async () => {
  await srv.stop();
});

describe('a dependent whose dependency is no longer done', () => {
  it('does not become ready (claimable) when its holder releases it after the dependency was reopened', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    const b = await board.agent('b');
    const made = await a.post('/api/items/batch', {
      items: [
        { ref: 'dep', title: 'Dependency' },
        { ref: 'x', title: 'Dependent', dependsOn: ['dep'] },
      ],
    });
    expect(made.status, made.text).toBe(201);
    const g1 = await a.post('/api/claim', { workId: 'W-1' });
    expect((await a.post('/api/submit', { leaseId: g1.body.leaseId, head: head(1) })).body.state).toBe('done');
    const g2 = await b.post('/api/claim', { workId: 'W-2' });
    expect(g2.status, g2.text).toBe(200);
    // The operator reopens the dependency: it is no longer done.
    const reopened = await board.owner.post(`/api/items/W-1/state?projectId=${board.projectId}`, { action: 'reopen' });
    expect(reopened.status, reopened.text).toBe(200);
    expect((await a.get('/api/items/W-1')).body.state).not.toBe('done');
    // The holder lets go of the dependent: W-1 is not done, so W-2 must wait (pending), not be handed out.
    expect((await b.post('/api/lease', { leaseId: g2.body.leaseId, action: 'release' })).status).toBe(200);
    expect((await a.get('/api/items/W-2')).body.state).toBe('pending');
    // Once W-1 is done again, W-2 is ready in the same change.
    const again = await a.post('/api/claim', { workId: 'W-1' });
    expect((await a.post('/api/submit', { leaseId: again.body.leaseId, head: head(3) })).body.state).toBe('done');
    expect((await a.get('/api/items/W-2')).body.state).toBe('ready');
  });

  it('does not go back to ready on a failed verdict while its dependency is not done', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    const b = await board.agent('b');
    const v = await board.agent('v');
    const made = await a.post('/api/items/batch', {
      items: [
        { ref: 'dep', title: 'Dependency' },
        { ref: 'x', title: 'Dependent', dependsOn: ['dep'], verify: 'required' },
      ],
    });
    expect(made.status, made.text).toBe(201);
    const g1 = await a.post('/api/claim', { workId: 'W-1' });
    await a.post('/api/submit', { leaseId: g1.body.leaseId, head: head(1) });
    const g2 = await b.post('/api/claim', { workId: 'W-2' });
    expect((await b.post('/api/submit', { leaseId: g2.body.leaseId, head: head(2) })).body.state).toBe(
      'awaiting_verify',
    );
    expect(
      (await board.owner.post(`/api/items/W-1/state?projectId=${board.projectId}`, { action: 'reopen' })).status,
    ).toBe(200);
    const failed = await v.post('/api/verify', { workId: 'W-2', head: head(2), verdict: 'fail', finding: digest('f') });
    expect(failed.status, failed.text).toBe(200);
    expect(failed.body.state).toBe('pending');
    // And pull-next does not hand it out while W-1 is not done (W-1 itself is the only ready item).
    const next = await b.post('/api/claim', {});
    expect(next.body.workId).not.toBe('W-2');
  });
});

describe('a dependent made to depend on an unfinished item while it was claimed', () => {
  it('keeps its lease, and does not come back ready when the lease expires', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    const b = await board.agent('b');
    await a.post('/api/items/batch', { items: [{ title: 'Dependency' }, { title: 'Dependent' }] });
    const g2 = await b.post('/api/claim', { workId: 'W-2', ttlSeconds: 60 });
    expect(g2.status, g2.text).toBe(200);
    // While W-2 is claimed it is made to depend on W-1, which is not done: allowed, and the holder keeps working.
    const edited = await a.request('PATCH', '/api/items/W-2', { json: { dependsOn: ['W-1'] } });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body).toMatchObject({ state: 'claimed', dependsOn: ['W-1'] });
    srv.advance(61_000);
    await until(async () => (await a.get('/api/items/W-2')).body.state !== 'claimed');
    // W-1 is still ready (not done): the expired dependent must wait for it, not be handed out.
    expect((await a.get('/api/items/W-1')).body.state).toBe('ready');
    expect((await a.get('/api/items/W-2')).body).toMatchObject({ state: 'pending', attempts: 1, lease: null });
  });
});
