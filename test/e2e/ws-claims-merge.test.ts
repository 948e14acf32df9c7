// Whether a `claims` holder may read the board's log on a socket is decided once: a repeated
// subscribe (merge) reads the held leases from the board as a first subscribe does. It once asked
// the existing subscription's view, whose `held` was never read when its first topics read no items
// or log (shouts), refusing the same socket, holding the same lease, what a first subscribe let in.
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

it('lets a holder widen its subscription to the log as a first subscribe would', async () => {
  const board = await newBoard(srv.url);
  const planner = await board.agent('planner');
  await planner.post('/api/items/batch', { items: [{ title: 'one' }] });
  const claimer = await board.resourceAgent('claimer', ['claims']);
  const bearer = claimer.defaults;
  expect((await claimer.post('/api/claim', { workId: 'W-1' })).status).toBe(200);

  // A first subscribe to the log is let in (it holds W-1).
  const fresh = await openSocket(srv.url, bearer);
  fresh.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
  expect((await fresh.next((m) => m.type === 'subscribed' || m.type === 'error')).type).toBe('subscribed');
  fresh.ws.close();

  // The same, as a widening of a shouts subscription.
  const socket = await openSocket(srv.url, bearer);
  socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['shouts'] });
  expect((await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).type).toBe('subscribed');
  socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
  const merged = await socket.next((m) => m.type === 'subscribed' || m.type === 'error');
  expect(merged.type, `the merge was refused: ${JSON.stringify(merged.error ?? merged)}`).toBe('subscribed');
  // And it reads the item it holds on the widened subscription, as a first subscribe would.
  expect((await planner.post('/api/items/W-1/comments', { text: 'for the holder' })).status).toBe(201);
  const comment = await socket.next((m) => m.type === 'event' && m.event.type === 'item.comment');
  expect(comment.event.workId).toBe('W-1');
  socket.ws.close();
});
