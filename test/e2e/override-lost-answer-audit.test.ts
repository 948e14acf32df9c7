// Review h67: f30f6e6 writes an override's audit row from the route, after the board's answer. When
// the commit lands but its answer is lost (503), the row is written only if that same admin repeats
// the call: an admin who sees the item done (as here) and does not retry leaves an override that
// DOMAIN.md says is audited ("operator override (reason) | done | audited") with no row at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { loseAnswerOnce } from '../support/fail-once.js';
import { OVERRIDE_AUDIT_FALLBACK_MS } from '../../src/board/override-audit.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { until } from '../support/until.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ BOARD_RATE_SCALE: '100' });
});
afterAll(async () => {
  await srv.stop();
});

describe('an override whose answer was lost', () => {
  it('is audited without a retry', async () => {
    const board = await newBoard(srv.url);
    const builder = await board.agent('builder');
    await builder.post('/api/items', { title: 'Gate', verify: 'required' });
    const g = await builder.post('/api/claim', { workId: 'W-1' });
    await builder.post('/api/submit', { leaseId: g.body.leaseId, head: head(1) });
    loseAnswerOnce(srv.store.boards, 'commit');
    const first = await board.owner.post(`/api/items/W-1/override?projectId=${board.projectId}`, { reason: 'hotfix' });
    expect(first.status, first.text).toBeGreaterThanOrEqual(500);
    expect((await builder.get('/api/items/W-1')).body).toMatchObject({
      state: 'done',
      overridden: { reason: 'hotfix' },
    });
    // No retry: the override stands, so its audit row must come all the same.
    await until(
      async () => (await srv.store.audit.find({ projectId: board.projectId, action: 'item.override' })).length > 0,
      {
        what: 'the override’s audit row',
        timeout: 5000,
      },
    );
    const rows = await srv.store.audit.find({ projectId: board.projectId, action: 'item.override' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor: expect.stringMatching(/^user:/),
      data: { workId: 'W-1', reason: 'hotfix' },
    });
  });

  it('answered, is one row, with its request’s origin (the home’s write from the event lands on it)', async () => {
    const board = await newBoard(srv.url);
    const builder = await board.agent('builder');
    await builder.post('/api/items', { title: 'Gate', verify: 'required' });
    const g = await builder.post('/api/claim', { workId: 'W-1' });
    await builder.post('/api/submit', { leaseId: g.body.leaseId, head: head(1) });
    const res = await board.owner.post(
      `/api/items/W-1/override?projectId=${board.projectId}`,
      { reason: 'hotfix' },
      { 'x-request-id': 'req-override-answered' },
    );
    expect(res.status, res.text).toBe(200);
    await new Promise((r) => setTimeout(r, OVERRIDE_AUDIT_FALLBACK_MS + 500));
    const rows = await srv.store.audit.find({ projectId: board.projectId, action: 'item.override' });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.data).toMatchObject({ workId: 'W-1', reason: 'hotfix', requestId: 'req-override-answered' });
  });
});
