// The two-key verify gate over real HTTP: an item that requires an independent verifier is done
// only by one, or by an admin's audited override; nobody lowers the gate on the way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { startTestServer, type TestServer } from '../support/server.js';

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
