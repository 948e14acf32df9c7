// /mcp's notices of a quiet caller read back past one page. docs/agents.md: "a node remembers what
// it told, so another node may tell a loss twice but none is missed". The check once read one page
// (100 of the board's lease endings, filtered by holder after; 50 shouts) and moved on: a loss with
// more than 100 other lease endings after it, or a direct shout with more than 50 shouts after it,
// was never told.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { closeAgents, httpAgent, noticesOf } from './agents.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ LEASE_MIN_TTL_SECONDS: '1', BOARD_RATE_SCALE: '100' });
});
afterAll(async () => {
  await srv.stop();
});
afterEach(closeAgents);

it('tells a quiet agent its lost lease even when more than 100 other leases ended after it', async () => {
  const board = await newBoard(srv.url);
  const quiet = await board.agent('quiet');
  const busy = await board.agent('busy');
  const q = `?projectId=${board.projectId}`;
  const token = quiet.defaults.authorization!.slice('Bearer '.length);
  const agent = await httpAgent(srv.url, token);
  await agent.ok('create_items', { items: Array.from({ length: 102 }, (_, i) => ({ title: `item ${i + 1}` })) });
  const { lease } = await agent.ok('claim_work', { workId: 'W-1', ttlSeconds: 1 });
  expect(lease.workId).toBe('W-1');
  await expect
    .poll(async () => (await board.owner.get(`/api/items/W-1${q}`)).body.state, { timeout: 15_000, interval: 200 })
    .toBe('ready');
  // 101 other leases end after it (another agent's, each left to run out).
  for (let n = 2; n <= 102; n++) {
    const r = await busy.post('/api/claim', { workId: `W-${n}`, ttlSeconds: 1 });
    expect(r.status).toBe(200);
  }
  await expect
    .poll(
      async () =>
        (await board.owner.post(`/api/history/query${q}`, { types: ['lease.expired'], limit: 200 })).body.events.length,
      { timeout: 30_000, interval: 500 },
    )
    .toBe(102);

  const next = await agent.call('board_status');
  expect(noticesOf(next)).toEqual([expect.objectContaining({ kind: 'lease.lost', workId: 'W-1', reason: 'expired' })]);
}, 60_000);

it('tells a quiet agent a direct shout even when more than 100 shouts came after it', async () => {
  const board = await newBoard(srv.url);
  const quiet = await board.agent('quiet');
  const busy = await board.agent('busy');
  const agent = await httpAgent(srv.url, quiet.defaults.authorization!.slice('Bearer '.length));
  await agent.ok('create_items', { items: [{ title: 'something to shout about' }] });
  expect((await busy.post('/api/shouts', { text: 'for you only', to: quiet.principal })).status).toBe(201);
  for (let n = 1; n <= 101; n++) expect((await busy.post('/api/shouts', { text: `news ${n}` })).status).toBe(201);

  const next = await agent.call('board_status');
  expect(noticesOf(next)).toEqual([
    expect.objectContaining({ kind: 'shout.direct', from: busy.principal, text: 'for you only' }),
  ]);
  // Told once.
  expect(noticesOf(await agent.call('board_status'))).toEqual([]);
}, 30_000);
