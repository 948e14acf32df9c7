// A lifecycle call whose commit landed but whose answer was lost (the store carried it out, then
// failed: 5xx, which tells the agent to retry): the retry is answered as the call it repeats, not
// as a stale or foreign lease to stop work on. Over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { loseAnswerOnce } from '../support/fail-once.js';
import { startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ BOARD_RATE_SCALE: '100' });
});
afterAll(async () => {
  await srv.stop();
});

describe('a call retried after its answer was lost', () => {
  it('submit: is answered as the submission it repeats; another head is still refused', async () => {
    const board = await newBoard(srv.url);
    const builder = await board.agent('builder');
    await builder.post('/api/items', { title: 'Gate', verify: 'required' });
    const g = await builder.post('/api/claim', { workId: 'W-1' });
    const body = { leaseId: g.body.leaseId, head: head(1) };
    loseAnswerOnce(srv.store.boards, 'commit');
    const first = await builder.post('/api/submit', body);
    expect(first.status, first.text).toBeGreaterThanOrEqual(500);
    expect((await builder.get('/api/items/W-1')).body.state).toBe('awaiting_verify'); // it landed
    const retried = await builder.post('/api/submit', body);
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toEqual({ workId: 'W-1', state: 'awaiting_verify' });
    // A different head under the ended lease is no repeat (the submitter supersedes instead).
    expectError(await builder.post('/api/submit', { ...body, head: head(2) }), 409, 'LEASE_NOT_HELD');
    expect((await builder.get('/api/items/W-1')).body.submission.head).toBe(head(1));
  });

  it('release: is answered as the release it repeats', async () => {
    const board = await newBoard(srv.url);
    const builder = await board.agent('builder');
    await builder.post('/api/items', { title: 'Task' });
    const g = await builder.post('/api/claim', { workId: 'W-1' });
    const body = { leaseId: g.body.leaseId, action: 'release' };
    loseAnswerOnce(srv.store.boards, 'commit');
    expect((await builder.post('/api/lease', body)).status).toBeGreaterThanOrEqual(500);
    expect((await builder.get('/api/items/W-1')).body.state).toBe('ready'); // it landed
    const retried = await builder.post('/api/lease', body);
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toEqual({ workId: 'W-1', action: 'release', lease: null });
    // The released lease renews nothing, and is not reported revoked: its holder let it go.
    const renew = await builder.post('/api/lease', { ...body, action: 'renew' });
    expectError(renew, 409, 'LEASE_NOT_HELD');
    expect(renew.body.error.details).not.toHaveProperty('revoked');
  });

  it('claim (for contrast): gets its lease back', async () => {
    const board = await newBoard(srv.url);
    const builder = await board.agent('builder');
    await builder.post('/api/items', { title: 'Gate' });
    loseAnswerOnce(srv.store.boards, 'commit');
    const first = await builder.post('/api/claim', { workId: 'W-1' });
    expect(first.status).toBeGreaterThanOrEqual(500);
    const retried = await builder.post('/api/claim', { workId: 'W-1' });
    expect(retried.status, retried.text).toBe(200);
  });
});
