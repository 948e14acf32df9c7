// GET /api/status as a resource token sees it (DOMAIN.md: a resource token naming work ids is shown
// nothing of another item, title, state or holder): the status group lets it read the snapshot,
// whose chain head, leases, items awaiting verification, stalled items and retired spec links are
// cut to the items it sees, and its own leases (a lease is its holder's); the counts stay whole.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

it('shows a resource token the status of its own items and leases only', async () => {
  const board = await newBoard(srv.url);
  const planner = await board.agent('planner');
  const made = await planner.post('/api/items/batch', {
    items: [{ title: 'one' }, { title: 'two' }, { title: 'three' }, { title: 'four' }],
  });
  expect(made.status, made.text).toBe(201);
  const tokenOf = async (name: string, resources: string[]) => {
    const issued = await board.owner.post('/api/accounts/tokens', {
      name,
      scope: 'resource',
      projectId: board.projectId,
      resources,
    });
    expect(issued.status, issued.text).toBe(201);
    return new Client(srv.url, { authorization: `Bearer ${issued.body.secret}` });
  };
  const narrow = await tokenOf('narrow', ['status', 'W-1']);
  const claimer = await tokenOf('claimer', ['status', 'claims']);
  for (const workId of ['W-1', 'W-2']) expect((await planner.post('/api/claim', { workId })).status).toBe(200);
  expect((await claimer.post('/api/claim', { workId: 'W-3' })).status).toBe(200);
  const whole = (await planner.get('/api/status')).body;
  expect(whole.leases.map((l: { workId: string }) => l.workId).sort()).toEqual(['W-1', 'W-2', 'W-3']);
  expect(whole.chainHead.map((i: { workId: string }) => i.workId)).toEqual(['W-4']);

  const lists = (body: { leases: { workId: string }[]; chainHead: { workId: string }[] }) => ({
    leases: body.leases.map((l) => l.workId).sort(),
    chainHead: body.chainHead.map((i) => i.workId),
  });
  const seenByNarrow = await narrow.get('/api/status');
  expect(seenByNarrow.status, seenByNarrow.text).toBe(200);
  expect(lists(seenByNarrow.body), 'a resource token was shown leases of items it does not see').toEqual({
    leases: ['W-1'],
    chainHead: [],
  });
  expect(seenByNarrow.body.counts).toEqual(whole.counts);
  const seenByClaimer = await claimer.get('/api/status');
  expect(lists(seenByClaimer.body), 'a claims token was shown others’ leases').toEqual({
    leases: ['W-3'],
    chainHead: [],
  });
});
