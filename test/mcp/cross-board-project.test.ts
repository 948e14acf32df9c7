// /mcp and stdio tools with ?projectId= / BOARD_PROJECT naming another account's board
// reach nothing of it (the pipeline's project selection refuses), notices included.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { closeAgents, httpAgent, noticesOf, refusal, stdioAgent } from './agents.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});
afterEach(closeAgents);

it('gives a token nothing of another board named by projectId, over /mcp and stdio', async () => {
  const mine = await newBoard(srv.url);
  const theirs = await newBoard(srv.url);
  const other = await theirs.agent('theirs');
  expect((await other.post('/api/items', { title: 'secret plan' })).status).toBe(201);
  expect((await other.post('/api/shouts', { text: 'secret shout' })).status).toBe(201);
  const token = (await mine.agent('nosy')).defaults.authorization!.slice('Bearer '.length);
  for (const agent of [
    await httpAgent(srv.url, token, `?tools=all&projectId=${theirs.projectId}`),
    await stdioAgent(srv.url, token, { BOARD_MCP_TOOLS: 'all', BOARD_PROJECT: theirs.projectId }),
  ]) {
    for (const [tool, args] of [
      ['board_status', {}],
      ['read_shouts', {}],
      ['list_items', {}],
      ['read_item', { workId: 'W-1' }],
      ['query_history', {}],
    ] as const) {
      const r = await agent.call(tool, args);
      expect(JSON.stringify(r)).not.toContain('secret');
      expect(r.isError, tool).toBe(true);
      expect(refusal(r).status).toBeGreaterThanOrEqual(400);
      expect(noticesOf(r)).toEqual([]);
    }
  }
}, 60_000);
