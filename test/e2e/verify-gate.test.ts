// The two-key verify gate over real HTTP: an item that requires an independent verifier is done
// only by one, or by an admin's audited override; nobody lowers the gate on the way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest, head, newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { failOnce, loseAnswerOnce } from '../support/fail-once.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { until } from '../support/until.js';
import { OVERRIDE_AUDIT_FALLBACK_MS } from '../../src/board/override-audit.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ BOARD_RATE_SCALE: '100' });
});
afterAll(async () => {
  await srv.stop();
});

describe('the two-key verify gate', () => {
  it('cannot be taken off an item by the member agent that then works it (a bypass is an admin’s move)', async () => {
    const board = await newBoard(srv.url);
    const builder = await board.agent('builder'); // a member
    const made = await board.owner.post(`/api/items?projectId=${board.projectId}`, {
      title: 'Important: needs an independent check',
      verify: 'required',
    });
    expect(made.status, made.text).toBe(201);
    const lowered = await builder.request('PATCH', '/api/items/W-1', { json: { verify: 'none' } });
    expectError(lowered, 403, 'ROLE_REQUIRED');
    expect(lowered.body.error.details).toMatchObject({ needed: 'admin', field: 'body.verify' });
    // Nothing changed: the builder's submit waits for a verifier.
    expect((await builder.get('/api/items/W-1')).body).toMatchObject({ verify: 'required', version: 1 });
    const g = await builder.post('/api/claim', { workId: 'W-1' });
    const submitted = await builder.post('/api/submit', { leaseId: g.body.leaseId, head: head(1) });
    expect(submitted.body.state).toBe('awaiting_verify');
  });

  it('is lowered by an admin, and raised by any member', async () => {
    const board = await newBoard(srv.url);
    const member = await board.agent('member');
    const admin = await board.agent('lead', 'admin');
    await member.post('/api/items', { title: 'Gated later' });
    const raised = await member.request('PATCH', '/api/items/W-1', { json: { verify: 'required' } });
    expect(raised.status, raised.text).toBe(200);
    expect(raised.body.verify).toBe('required');
    // A member's edit that leaves the gate as it is goes through.
    expect(
      (await member.request('PATCH', '/api/items/W-1', { json: { verify: 'required', priority: 1 } })).status,
    ).toBe(200);
    const lowered = await admin.request('PATCH', '/api/items/W-1', { json: { verify: 'none' } });
    expect(lowered.status, lowered.text).toBe(200);
    expect(lowered.body.verify).toBe('none');
  });
});

describe('lowering the verify gate', () => {
  const rowsOf = (projectId: string) => srv.store.audit.find({ projectId, action: 'item.gate.lower' });

  it('is audited like an override: one row, with its request’s origin; a raise or another edit writes none', async () => {
    const board = await newBoard(srv.url);
    const member = await board.agent('member');
    const admin = await board.agent('lead', 'admin');
    await member.post('/api/items', { title: 'Gated', verify: 'required' });
    await member.request('PATCH', '/api/items/W-1', { json: { priority: 1 } });
    const lowered = await admin.request('PATCH', '/api/items/W-1', {
      json: { verify: 'none' },
      headers: { 'x-request-id': 'req-gate-lowered' },
    });
    expect(lowered.status, lowered.text).toBe(200);
    await member.request('PATCH', '/api/items/W-1', { json: { verify: 'required' } });
    await admin.request('PATCH', '/api/items/W-1', { json: { verify: 'required', title: 'Gated still' } });
    // The home's own write from the committed event lands on the route's row, never a second.
    await new Promise((r) => setTimeout(r, OVERRIDE_AUDIT_FALLBACK_MS + 500));
    const rows = await rowsOf(board.projectId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor: admin.principal,
      data: { workId: 'W-1', from: 'required', to: 'none', requestId: 'req-gate-lowered' },
    });
  });

  it('is audited when its answer was lost, with no retry', async () => {
    const board = await newBoard(srv.url);
    const admin = await board.agent('lead', 'admin');
    await admin.post('/api/items', { title: 'Gated', verify: 'required' });
    loseAnswerOnce(srv.store.boards, 'commit');
    const first = await admin.request('PATCH', '/api/items/W-1', { json: { verify: 'none' } });
    expect(first.status, first.text).toBeGreaterThanOrEqual(500);
    expect((await admin.get('/api/items/W-1')).body.verify).toBe('none'); // it landed
    await until(async () => (await rowsOf(board.projectId)).length > 0, {
      what: 'the lowering’s audit row',
      timeout: 5000,
    });
    expect(await rowsOf(board.projectId)).toEqual([
      expect.objectContaining({ actor: admin.principal, data: { workId: 'W-1', from: 'required', to: 'none' } }),
    ]);
  });
});

describe('an operator override of the verify gate', () => {
  /** A board whose W-1 (verify required) awaits its verdict, and the path of its override. */
  async function awaiting() {
    const board = await newBoard(srv.url);
    const builder = await board.agent('builder');
    await builder.post('/api/items', { title: 'Gate', verify: 'required' });
    const g = await builder.post('/api/claim', { workId: 'W-1' });
    await builder.post('/api/submit', { leaseId: g.body.leaseId, head: head(1) });
    return { board, builder, path: `/api/items/W-1/override?projectId=${board.projectId}` };
  }
  const rowsOf = (projectId: string) => srv.store.audit.find({ projectId, action: 'item.override' });

  it('is never left done without its audit row (the row could not be written at first)', async () => {
    const { board, builder, path } = await awaiting();
    failOnce(srv.store.audit, 'insert');
    const first = await board.owner.post(path, { reason: 'ship it' });
    expect((await builder.get('/api/items/W-1')).body.state).toBe('done');
    // The override stands, so its row is written all the same (again, until the store takes it)...
    expect(first.status, first.text).toBe(200);
    await until(async () => (await rowsOf(board.projectId)).length > 0);
    // ...and an operator who retries anyway is answered as the first was, with no second row.
    const retried = await board.owner.post(path, { reason: 'ship it' });
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toEqual({ workId: 'W-1', state: 'done' });
    const rows = await rowsOf(board.projectId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor: expect.stringMatching(/^user:/),
      data: { workId: 'W-1', reason: 'ship it' },
    });
  });

  it('retried after its answer was lost writes the row the first never reached', async () => {
    const { board, builder, path } = await awaiting();
    loseAnswerOnce(srv.store.boards, 'commit');
    const first = await board.owner.post(path, { reason: 'hotfix' });
    expect(first.status, first.text).toBeGreaterThanOrEqual(500);
    expect((await builder.get('/api/items/W-1')).body).toMatchObject({
      state: 'done',
      overridden: { reason: 'hotfix' },
    });
    const retried = await board.owner.post(path, { reason: 'hotfix' });
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toEqual({ workId: 'W-1', state: 'done' });
    expect(await rowsOf(board.projectId)).toHaveLength(1);
    // Another admin's override of the done item is still refused: only the override's own repeat is answered.
    const other = await board.agent('lead', 'admin');
    expectError(await other.post('/api/items/W-1/override', { reason: 'again' }), 409, 'INVALID_TRANSITION');
  });
});

describe('a verify lease', () => {
  it('is not taken from its holder silently by another verifier’s verdict', async () => {
    const board = await newBoard(srv.url);
    const builder = await board.agent('builder');
    const v1 = await board.agent('v1');
    const v2 = await board.agent('v2');
    await builder.post('/api/items', { title: 'Gate', verify: 'required' });
    const g = await builder.post('/api/claim', { workId: 'W-1' });
    await builder.post('/api/submit', { leaseId: g.body.leaseId, head: head(1) });
    const held = await v1.post('/api/claim', { workId: 'W-1', purpose: 'verify' });
    expect(held.status, held.text).toBe(200);
    expect(held.body.purpose).toBe('verify');
    // While v1 holds the exclusive verify lease, v2 (holding nothing) passes the item.
    const verdict = await v2.post('/api/verify', { workId: 'W-1', head: head(1), verdict: 'pass' });
    expect(verdict.status, verdict.text).toBe(200);
    expect(verdict.body.state).toBe('done');
    // v1 is told its lease ended, on the board and at its next renew, as for every other ending.
    const events = (await builder.get('/api/activity?limit=50')).body.events as {
      type: string;
      data: { reason?: string; lease?: { holder: string } };
    }[];
    expect(events.find((e) => e.type === 'lease.revoked')).toMatchObject({
      data: { reason: 'verified', lease: { holder: v1.principal } },
    });
    const renew = await v1.post('/api/lease', { leaseId: held.body.leaseId, action: 'renew' });
    expect(renew.status, renew.text).toBe(200);
    expect(renew.body).toMatchObject({ workId: 'W-1', lease: null, revoked: true, reason: 'verified' });
  });
});

describe('a verdict’s evidence', () => {
  it('is kept on the verification and its event when POST /api/verify accepts it', async () => {
    const board = await newBoard(srv.url);
    const builder = await board.agent('builder');
    const checker = await board.agent('checker');
    await builder.post('/api/items', { title: 'Gate', verify: 'required' });
    const g = await builder.post('/api/claim', { workId: 'W-1' });
    await builder.post('/api/submit', { leaseId: g.body.leaseId, head: head(1) });
    const evidence = [digest('e'), digest('d')];
    const res = await checker.post('/api/verify', { workId: 'W-1', head: head(1), verdict: 'pass', evidence });
    expect(res.status, res.text).toBe(200);
    const item = (await builder.get('/api/items/W-1')).body;
    expect(item.verifications).toEqual([expect.objectContaining({ by: checker.principal, verdict: 'pass', evidence })]);
    const events = (await builder.get('/api/activity?limit=50')).body.events as {
      type: string;
      data: { verification?: { evidence?: string[] } };
    }[];
    expect(events.find((e) => e.type === 'item.verified')?.data.verification?.evidence).toEqual(evidence);
    // Still digests only: anything else is refused.
    expectError(
      await checker.post('/api/verify', { workId: 'W-1', head: head(1), verdict: 'pass', evidence: ['the log'] }),
      400,
      'INVALID_INPUT',
    );
  });
});
