// A claim naming an item that no claim can take now (DOMAIN.md "Claims and leases"): 409
// ITEM_NOT_READY with the item's state, whatever the state, for work and verify claims alike;
// INVALID_TRANSITION stays for events that are not claims.
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

describe('claiming a named item that is not claimable', () => {
  it('answers ITEM_NOT_READY with the state for a done, cancelled, pending, blocked or held item; a state move it does not take stays INVALID_TRANSITION', async () => {
    const board = await newBoard(srv.url);
    const worker = await board.agent('worker');
    const other = await board.agent('other');
    const made = await worker.post('/api/items/batch', {
      items: [
        { ref: 'done', title: 'Finished' },
        { ref: 'cancelled', title: 'Dropped' },
        { ref: 'pending', title: 'Waits', dependsOn: ['cancelled'] },
        { ref: 'blocked', title: 'Stuck' },
        { ref: 'held', title: 'Taken' },
      ],
    });
    expect(made.status, made.text).toBe(201);
    const grant = await worker.post('/api/claim', { workId: 'W-1' });
    expect(grant.status, grant.text).toBe(200);
    expect((await worker.post('/api/submit', { leaseId: grant.body.leaseId, head: head(1) })).body).toEqual({
      workId: 'W-1',
      state: 'done',
    });
    const state = (workId: string, action: string) =>
      board.owner.post(`/api/items/${workId}/state?projectId=${board.projectId}`, { action, reason: 'test' });
    expect((await state('W-2', 'cancel')).status).toBe(200);
    expect((await state('W-4', 'block')).status).toBe(200);
    const held = await worker.post('/api/claim', { workId: 'W-5' });
    expect(held.status, held.text).toBe(200);

    const expected: [string, string][] = [
      ['W-1', 'done'],
      ['W-2', 'cancelled'],
      ['W-3', 'pending'],
      ['W-4', 'blocked'],
      ['W-5', 'claimed'],
    ];
    for (const [workId, itemState] of expected) {
      for (const purpose of ['work', 'verify']) {
        const res = await other.post('/api/claim', { workId, purpose });
        expectError(res, 409, 'ITEM_NOT_READY');
        expect(res.body.error.details, `${workId} ${purpose}`).toMatchObject({ workId, state: itemState });
      }
    }
    // A held item names its holder and the lease's expiry.
    const refused = await other.post('/api/claim', { workId: 'W-5' });
    expect(refused.body.error.details).toMatchObject({ holder: worker.principal, expiresAt: held.body.expiresAt });
    // Nothing changed: the items are as they were.
    for (const [workId, itemState] of expected)
      expect((await other.get(`/api/items/${workId}`)).body.state).toBe(itemState);

    // Not a claim: a state move the state does not take is still INVALID_TRANSITION, naming what it takes.
    const unblock = await state('W-1', 'unblock');
    expectError(unblock, 409, 'INVALID_TRANSITION');
    expect(unblock.body.error.details).toMatchObject({
      workId: 'W-1',
      state: 'done',
      allowed: expect.arrayContaining(['REOPEN']),
    });
  });
});
