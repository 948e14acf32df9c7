// Review h70: a `claims` token reads the item it holds while it holds it (2fafada): GET
// /api/items/W-1 answers it, and a socket's snapshot ("as GET /api/items") holds W-1. But GET
// /api/items itself lists with `within: call.view.items` (the named work ids alone, not `held`):
// the holder is let in (seesAnyItem counts held) and answered an empty page.
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

it('lists to a claims token the item it holds, as GET /api/items/{workId} and the snapshot show it', async () => {
  const board = await newBoard(srv.url);
  const planner = await board.agent('planner');
  await planner.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }] });
  const issued = await board.owner.post('/api/accounts/tokens', {
    name: 'claimer',
    scope: 'resource',
    projectId: board.projectId,
    resources: ['claims'],
  });
  expect(issued.status, issued.text).toBe(201);
  const claimer = new Client(srv.url, { authorization: `Bearer ${issued.body.secret}` });
  expect((await claimer.post('/api/claim', { workId: 'W-1' })).status).toBe(200);

  const one = await claimer.get('/api/items/W-1');
  expect(one.status, one.text).toBe(200);
  const list = await claimer.get('/api/items');
  expect(list.status, list.text).toBe(200);
  expect(
    (list.body.items as { workId: string }[]).map((i) => i.workId),
    'GET /api/items let the holder in and listed nothing',
  ).toEqual(['W-1']);
});
