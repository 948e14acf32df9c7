// A `claims` token reads the item it holds while it holds it: GET /api/items/W-1 answers it, a
// socket's snapshot ("as GET /api/items") holds W-1, and GET /api/items lists it, filtered by the
// one rule (seesItem). The list once used the named work ids alone, answering the holder it let in
// an empty page.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';

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
  const claimer = await board.resourceAgent('claimer', ['claims']);
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
