// A resource token's roster (GET /api/agents, the socket's roster and heartbeats) names other
// agents' items only where the token sees them, as its status read does (DOMAIN.md: "Nothing of
// another item (title, state, holder, patch) reaches it"); its own entry stays whole. The roster
// once listed every agent's leases by work id, the holders of the items the status read hides.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { openSocket } from '../support/socket.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

it('shows a status-group resource token no holder of another item on the roster either', async () => {
  const board = await newBoard(srv.url);
  const planner = await board.agent('planner');
  await planner.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }] });
  const narrow = await board.resourceAgent('narrow', ['status', 'W-1']);
  expect((await planner.post('/api/claim', { workId: 'W-2' })).status).toBe(200);

  const status = await narrow.get('/api/status');
  expect(status.body.leases.map((l: { workId: string }) => l.workId)).toEqual([]); // as e2d910f cut it
  const agents = await narrow.get('/api/agents');
  expect(agents.status, agents.text).toBe(200);
  const shown = (agents.body.agents as { principal: string; leases: string[] }[]).flatMap((a) =>
    a.leases.map((w) => `${w} held by ${a.principal}`),
  );
  expect(shown, 'the roster names the holder of an item the token does not see').toEqual([]);
});

it('tells a status-group resource token’s socket no item of another agent it does not see', async () => {
  const board = await newBoard(srv.url);
  const planner = await board.agent('planner');
  await planner.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }] });
  const narrow = await board.resourceAgent('narrow', ['status', 'W-1']);
  const bearer = narrow.defaults;
  const beat = (workId: string) => planner.post('/api/status/heartbeat', { status: 'working', note: 'on it', workId });
  expect((await beat('W-2')).status).toBe(200);

  const socket = await openSocket(srv.url, bearer);
  socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['presence'] });
  const roster = await socket.next((m) => m.type === 'roster' || m.type === 'error');
  expect(roster.type, JSON.stringify(roster)).toBe('roster');
  expect(roster.agents.map((a: { workId: string | null }) => a.workId)).toEqual([null]);
  // A heartbeat on the item it sees names it; one on another item does not.
  expect((await beat('W-1')).status).toBe(200);
  expect((await socket.next((m) => m.type === 'presence')).agent.workId).toBe('W-1');
  expect((await beat('W-2')).status).toBe(200);
  expect((await socket.next((m) => m.type === 'presence')).agent.workId).toBe(null);
  socket.ws.close();
});
