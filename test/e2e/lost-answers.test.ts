// A lifecycle call whose commit landed but whose answer was lost (the store carried it out, then
// failed: 5xx, which tells the agent to retry): the retry is answered as the call it repeats, not
// as a stale or foreign lease to stop work on. Over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest, head, newBoard, type TestBoard } from '../support/board.js';
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

  /** W-1, gated, submitted at head(1) by a builder and claimed for verification by a reviewer. */
  async function awaitingVerdict(board: TestBoard) {
    const builder = await board.agent('builder');
    const reviewer = await board.agent('reviewer');
    await builder.post('/api/items', { title: 'Gate', verify: 'required' });
    const g = await builder.post('/api/claim', { workId: 'W-1' });
    await builder.post('/api/submit', { leaseId: g.body.leaseId, head: head(1) });
    expect((await reviewer.post('/api/claim', { workId: 'W-1', purpose: 'verify' })).status).toBe(200);
    return { builder, reviewer };
  }

  it('verify: a pass is answered as the verdict it repeats; another verdict is still refused', async () => {
    const { reviewer } = await awaitingVerdict(await newBoard(srv.url));
    const body = { workId: 'W-1', head: head(1), verdict: 'pass', evidence: [digest('e')] };
    loseAnswerOnce(srv.store.boards, 'commit');
    const first = await reviewer.post('/api/verify', body);
    expect(first.status, first.text).toBeGreaterThanOrEqual(500);
    expect((await reviewer.get('/api/items/W-1')).body.state).toBe('done'); // it landed
    const retried = await reviewer.post('/api/verify', body);
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toEqual({ workId: 'W-1', state: 'done' });
    // Not the same verdict: refused as before, and nothing recorded twice.
    expectError(
      await reviewer.post('/api/verify', { ...body, verdict: 'fail', finding: digest('f') }),
      409,
      'INVALID_TRANSITION',
    );
    expect((await reviewer.get('/api/items/W-1')).body.verifications).toHaveLength(1);
  });

  it('verify: a fail is answered as the verdict it repeats', async () => {
    const { reviewer } = await awaitingVerdict(await newBoard(srv.url));
    const body = { workId: 'W-1', head: head(1), verdict: 'fail', finding: digest('f') };
    loseAnswerOnce(srv.store.boards, 'commit');
    expect((await reviewer.post('/api/verify', body)).status).toBeGreaterThanOrEqual(500);
    expect((await reviewer.get('/api/items/W-1')).body.state).toBe('ready'); // it landed
    const retried = await reviewer.post('/api/verify', body);
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toEqual({ workId: 'W-1', state: 'ready' });
    expect((await reviewer.get('/api/items/W-1')).body.attempts).toBe(1); // counted once
    // Another finding is another verdict.
    expectError(await reviewer.post('/api/verify', { ...body, finding: digest('a') }), 409, 'INVALID_TRANSITION');
  });

  it('supersede: is answered as the supersede it repeats; the head a submit gave is still refused', async () => {
    const board = await newBoard(srv.url);
    const { builder } = await awaitingVerdict(board);
    // The head the submit gave is no supersede, so no repeat of one.
    expectError(await builder.post('/api/supersede', { workId: 'W-1', head: head(1) }), 409, 'HEAD_MISMATCH');
    const body = { workId: 'W-1', head: head(2) };
    loseAnswerOnce(srv.store.boards, 'commit');
    expect((await builder.post('/api/supersede', body)).status).toBeGreaterThanOrEqual(500);
    expect((await builder.get('/api/items/W-1')).body.submission.head).toBe(head(2)); // it landed
    const retried = await builder.post('/api/supersede', body);
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toEqual({ workId: 'W-1', state: 'awaiting_verify' });
    // Only the submitter's own supersede repeats: another member is refused as before.
    const other = await board.agent('other');
    expectError(await other.post('/api/supersede', body), 403, 'NOT_SUBMITTER');
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
