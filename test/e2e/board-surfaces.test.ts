// The rest of the board surface over real HTTP: editing, comments, reordering, shouts, presence,
// history, metrics, and the rate budgets on board responses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

describe('editing, comments, reordering', () => {
  it('edits fields at the expected version, re-locks on a new open dependency, and refuses stale edits', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    await a.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }] });
    const edited = await a.request('PATCH', '/api/items/W-2', {
      json: { title: 'two, renamed', labels: ['api'], dependsOn: ['W-1'], expectedVersion: 1 },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ title: 'two, renamed', labels: ['api'], dependsOn: ['W-1'], state: 'pending' });
    expectError(
      await a.request('PATCH', '/api/items/W-2', { json: { title: 'late', expectedVersion: 1 } }),
      409,
      'VERSION_MISMATCH',
    );
    expectError(
      await a.request('PATCH', '/api/items/W-1', { json: { dependsOn: ['W-2'] } }),
      400,
      'CONFLICTING_DEPENDENCIES',
    );
    expectError(await a.request('PATCH', '/api/items/W-1', { json: { head: head(1) } }), 400, 'COMMIT_ID_FORBIDDEN');
    const unlocked = await a.request('PATCH', '/api/items/W-2', { json: { dependsOn: [] } });
    expect(unlocked.body.state).toBe('ready');
  });

  it('keeps comments in order and lists them', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    await a.post('/api/items', { title: 'discussed' });
    expect((await a.post('/api/items/W-1/comments', { text: 'first' })).status).toBe(201);
    await a.post('/api/items/W-1/comments', { text: 'second' });
    const listed = await a.get('/api/items/W-1/comments');
    expect(listed.body.comments.map((c: { text: string; by: string }) => [c.text, c.by])).toEqual([
      ['first', a.principal],
      ['second', a.principal],
    ]);
    expectError(await a.post('/api/items/W-9/comments', { text: 'x' }), 404, 'ITEM_NOT_FOUND');
  });

  it('reorders the priority chain (admin)', async () => {
    const board = await newBoard(srv.url);
    const member = await board.agent('m');
    const admin = await board.agent('boss', 'admin');
    await member.post('/api/items/batch', { items: [{ title: '1' }, { title: '2' }, { title: '3' }] });
    expectError(await member.post('/api/items/reorder', { workIds: ['W-3'] }), 403, 'ROLE_REQUIRED');
    expect((await admin.post('/api/items/reorder', { workIds: ['W-3', 'W-2'] })).body.order).toEqual(['W-3', 'W-2']);
    expect((await member.get('/api/status')).body.chainHead.map((i: { workId: string }) => i.workId)).toEqual([
      'W-3',
      'W-2',
      'W-1',
    ]);
    expect((await member.post('/api/claim', {})).body.workId).toBe('W-3');
  });
});

describe('revoked leases', () => {
  it('tell a working holder at its next renew that the item was blocked under it, and refuse its submit', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    await a.post('/api/items', { title: 'doomed' });
    const lease = (await a.post('/api/claim', {})).body;
    await board.owner.post(`/api/items/W-1/state?projectId=${board.projectId}`, {
      action: 'block',
      reason: 'wrong approach',
    });
    const renew = await a.post('/api/lease', { leaseId: lease.leaseId, action: 'renew' });
    expect(renew.status).toBe(200);
    expect(renew.body).toEqual({ workId: 'W-1', action: 'renew', lease: null, revoked: true, reason: 'blocked' });
    const submit = await a.post('/api/submit', { leaseId: lease.leaseId, head: head(5) });
    expectError(submit, 409, 'LEASE_NOT_HELD');
    expect(submit.body.error.details).toMatchObject({ revoked: true, reason: 'blocked', workId: 'W-1' });
    expect((await a.get('/api/items/W-1')).body).toMatchObject({
      state: 'blocked',
      blockedReason: 'wrong approach',
      submission: null,
    });
  });
});

describe('shouts', () => {
  it('posts broadcasts and item shouts, pages with since, and keeps direct shouts between their parties', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    const b = await board.agent('b');
    const c = await board.agent('c');
    const first = await a.post('/api/shouts', { text: 'starting W-1', kind: 'info', workId: 'W-1' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ from: a.principal, workId: 'W-1', to: null });
    const direct = await a.post('/api/shouts', { text: 'can you review?', kind: 'request', to: b.principal });
    await a.post('/api/shouts', { text: 'broadcast' });

    expect((await c.get('/api/shouts')).body.shouts.map((s: { text: string }) => s.text)).toEqual([
      'starting W-1',
      'broadcast',
    ]);
    expect(
      (await a.get('/api/shouts')).body.shouts.find((s: { id: string }) => s.id === direct.body.id).deliveredAt,
    ).toBeNull();
    const toB = await b.get('/api/shouts');
    expect(toB.body.shouts.map((s: { text: string }) => s.text)).toEqual([
      'starting W-1',
      'can you review?',
      'broadcast',
    ]);
    expect(
      (await a.get('/api/shouts')).body.shouts.find((s: { id: string }) => s.id === direct.body.id).deliveredAt,
    ).toEqual(expect.any(String));
    expect((await board.owner.get(`/api/shouts?projectId=${board.projectId}`)).body.shouts).toHaveLength(3);

    const page = await c.get(`/api/shouts?since=${encodeURIComponent(first.body.id)}`);
    expect(page.body.shouts.map((s: { text: string }) => s.text)).toEqual(['broadcast']);
    expect((await c.get(`/api/shouts?since=${encodeURIComponent(page.body.next)}`)).body.shouts).toEqual([]);
    expectError(await c.get('/api/shouts?since=elsewhere:1'), 400, 'INVALID_CURSOR');
    expectError(await a.post('/api/shouts', { text: '' }), 400, 'INVALID_INPUT');
    expectError(await a.post('/api/shouts', { text: 'x', to: 'nobody' }), 400, 'INVALID_INPUT');
  });
});

describe('presence, history, metrics', () => {
  it('records heartbeats and lists the roster with leases held', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    const b = await board.agent('b');
    await a.post('/api/items', { title: 'x' });
    await b.post('/api/claim', {});
    expect((await a.post('/api/status/heartbeat', { status: 'idle', note: 'waiting' })).status).toBe(200);
    await a.post('/api/status/heartbeat', { status: 'working', note: 'reading', workId: 'W-1' });
    const roster = (await a.get('/api/agents')).body.agents;
    expect(roster).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          principal: a.principal,
          status: 'working',
          note: 'reading',
          online: true,
          leases: [],
        }),
        expect.objectContaining({ principal: b.principal, online: false, leases: ['W-1'] }),
      ]),
    );
    srv.advance(121_000);
    expect(
      (await a.get('/api/agents')).body.agents.find((x: { principal: string }) => x.principal === a.principal).online,
    ).toBe(false);
  });

  it('filters history and computes metrics from the log', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    const v = await board.agent('v');
    await a.post('/api/items/batch', { items: [{ title: 'gated', verify: 'required' }, { title: 'plain' }] });
    const l1 = (await a.post('/api/claim', { workId: 'W-1' })).body;
    await a.post('/api/submit', { leaseId: l1.leaseId, head: head(1) });
    await v.post('/api/verify', { workId: 'W-1', head: head(1), verdict: 'pass' });
    const l2 = (await a.post('/api/claim', { workId: 'W-2' })).body;
    await a.post('/api/submit', { leaseId: l2.leaseId, head: head(2) });

    const byItem = await a.post('/api/history/query', { workId: 'W-1', types: ['item.state'] });
    expect(byItem.body.events.map((e: { data: { to: string } }) => e.data.to)).toEqual([
      'done',
      'awaiting_verify',
      'claimed',
    ]);
    const byActor = await a.post('/api/history/query', { actor: v.principal });
    expect(byActor.body.events.every((e: { actor: string }) => e.actor === v.principal)).toBe(true);
    const future = await a.post('/api/history/query', { from: new Date(Date.now() + 3600_000).toISOString() });
    expect(future.body.events).toEqual([]);
    expectError(await a.post('/api/history/query', { types: 'item.state' }), 400, 'INVALID_INPUT');

    const metrics = (await a.get('/api/metrics')).body;
    expect(metrics.counts).toMatchObject({ done: 2 });
    expect(metrics.throughputPerDay.reduce((n: number, d: { done: number }) => n + d.done, 0)).toBe(2);
    expect(metrics.verifyPassRate).toBe(1);
    expect(metrics.leaseExpiryRate).toBe(0);
    expect(metrics.medianReadyToDoneSeconds).toBeGreaterThanOrEqual(0);
    expect(metrics.agentsActiveLastHour).toBe(2);
  });
});

describe('metrics across days', () => {
  it('keeps counting a day once the header hands it to the archive: GET /api/metrics reads both', async () => {
    const own = await startTestServer();
    try {
      const board = await newBoard(own.url);
      const a = await board.agent('a');
      await a.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }] });
      const doneOne = async (workId: string) => {
        const lease = (await a.post('/api/claim', { workId })).body;
        expect((await a.post('/api/submit', { leaseId: lease.leaseId, head: head(1) })).status).toBe(200);
      };
      await doneOne('W-1');
      const first = new Date(Date.now()).toISOString().slice(0, 10);
      own.advance(3 * 86_400_000);
      await doneOne('W-2'); // the first day is two days behind now: this commit moves it out of the header
      const header = (await own.store.boards.get(board.projectId))!.stats as { days: Record<string, unknown> };
      expect(Object.keys(header.days)).not.toContain(first);
      expect((await own.store.boardStatsDays.find({ boardId: board.projectId })).map((r) => r.day)).toEqual([first]);
      const metrics = (await a.get('/api/metrics')).body;
      expect(metrics.throughputPerDay).toHaveLength(2);
      expect(metrics.throughputPerDay[0]).toEqual({ day: first, done: 1 });
      expect(metrics.throughputPerDay.reduce((n: number, d: { done: number }) => n + d.done, 0)).toBe(2);
    } finally {
      await own.stop();
    }
  });
});

describe('rate budgets on board responses', () => {
  it('reports the nine headers, denies writes past the write budget, and keeps reads and the lifecycle open', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    srv.holdBudgets();
    await a.post('/api/items', { title: 'keep working' });
    let last = await a.post('/api/shouts', { text: 'spend' });
    while (last.status === 201) last = await a.post('/api/shouts', { text: 'spend' });
    expectError(last, 429, 'RATE_LIMITED');
    expect(last.headers.get('x-ratelimit-write-remaining')).toBe('0');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expectError(await a.post('/api/items', { title: 'denied' }), 429, 'RATE_LIMITED');

    const status = await a.get('/api/status');
    expect(status.status).toBe(200);
    for (const h of [
      'limit',
      'remaining',
      'reset',
      'request-limit',
      'request-remaining',
      'request-reset',
      'write-limit',
      'write-remaining',
      'write-reset',
    ])
      expect(status.headers.get(`x-ratelimit-${h}`), h).toMatch(/^\d+$/);
    expect(status.headers.get('x-ratelimit-write-limit')).toBe('120');
    const lease = await a.post('/api/claim', {});
    expect(lease.status).toBe(200);
    expect((await a.post('/api/lease', { leaseId: lease.body.leaseId, action: 'renew' })).status).toBe(200);
    expect((await a.post('/api/submit', { leaseId: lease.body.leaseId, head: head(7) })).status).toBe(200);
    expect((await a.get('/api/whoami')).status).toBe(200);
    srv.advance(60_000);
    expect((await a.post('/api/shouts', { text: 'a new window' })).status).toBe(201);
  });
});

describe('BOARD_RATE_SCALE', () => {
  it('multiplies every plan budget, in the headers and in what is allowed', async () => {
    const scaled = await startTestServer({ BOARD_RATE_SCALE: '3' });
    try {
      const board = await newBoard(scaled.url);
      const a = await board.agent('a');
      const status = await a.get('/api/status');
      expect(status.headers.get('x-ratelimit-write-limit')).toBe('360');
      expect(status.headers.get('x-ratelimit-request-limit')).toBe('1800');
      // The budget is a fixed window: spend it in one held still, or a reset mid-way lets more through.
      scaled.holdBudgets();
      let writes = 0;
      while ((await a.post('/api/shouts', { text: 'spend' })).status === 201) writes++;
      expect(writes).toBe(360);
    } finally {
      await scaled.stop();
    }
  });
});
