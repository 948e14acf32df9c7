// A resource token's roster (GET /api/agents, the socket's roster and heartbeats) names other
// agents' items only where the token sees them, as its status read does (DOMAIN.md: "Nothing of
// another item (title, state, holder, patch) reaches it"); its own entry stays whole. The roster
// once listed every agent's leases by work id, the holders of the items the status read hides.
// An agent's note is free text about its work: it reaches the token only where the token sees all
// of that work (the item the agent works on and each it holds); it once went out whole.
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

it('tells a status-group resource token an agent’s note only where it sees all that agent’s work, over REST and its socket', async () => {
  const board = await newBoard(srv.url);
  const planner = await board.agent('planner');
  const worker = await board.agent('worker');
  await planner.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }] });
  const narrow = await board.resourceAgent('narrow', ['status', 'W-1']);
  expect((await worker.post('/api/claim', { workId: 'W-1' })).status).toBe(200);
  expect((await planner.post('/api/claim', { workId: 'W-2' })).status).toBe(200);
  const beat = (agent: typeof planner, workId: string, note: string) =>
    agent.post('/api/status/heartbeat', { status: 'working', note, workId });
  // The worker works on and holds W-1 alone; the planner says it works on W-1 but holds W-2.
  expect((await beat(worker, 'W-1', 'W-1 half way')).status).toBe(200);
  expect((await beat(planner, 'W-1', 'W-2 moves the billing tables')).status).toBe(200);
  const notes = (agents: { principal: string; note: string | null }[]) =>
    Object.fromEntries(agents.map((a) => [a.principal === worker.principal ? 'worker' : 'planner', a.note]));

  const agents = await narrow.get('/api/agents');
  expect(agents.status, agents.text).toBe(200);
  expect(
    notes(agents.body.agents),
    'GET /api/agents told the note of an agent holding an item it does not see',
  ).toEqual({ worker: 'W-1 half way', planner: '' });

  const socket = await openSocket(srv.url, narrow.defaults);
  socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['presence'] });
  const roster = await socket.next((m) => m.type === 'roster' || m.type === 'error');
  expect(roster.type, JSON.stringify(roster)).toBe('roster');
  expect(notes(roster.agents), 'the socket roster told it').toEqual({ worker: 'W-1 half way', planner: '' });
  // Heartbeats as they land: on an item it does not see, or with a lease on one, the note is cut.
  expect((await beat(planner, 'W-2', 'W-2: the tables go first')).status).toBe(200);
  expect((await socket.next((m) => m.type === 'presence')).agent).toMatchObject({ workId: null, note: '' });
  expect((await beat(planner, 'W-1', 'W-2 after lunch')).status).toBe(200);
  expect((await socket.next((m) => m.type === 'presence')).agent).toMatchObject({ workId: 'W-1', note: '' });
  expect((await beat(worker, 'W-1', 'W-1 nearly done')).status).toBe(200);
  expect((await socket.next((m) => m.type === 'presence')).agent).toMatchObject({
    workId: 'W-1',
    note: 'W-1 nearly done',
  });
  socket.ws.close();
});
