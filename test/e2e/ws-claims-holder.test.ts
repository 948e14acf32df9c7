// A resource token of the `claims` group alone reads the item it holds for as long as it holds the
// lease (src/board/visibility.ts), on its socket as over REST: its subscription carries the held
// item's events from the grant to the lease's end, and nothing of the items it does not hold.
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

it('sends a claims token the events of the item it holds while it holds it', async () => {
  const board = await newBoard(srv.url);
  const planner = await board.agent('planner');
  await planner.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }, { title: 'three' }] });
  const claimer = await board.resourceAgent('claimer', ['claims']);
  const bearer = claimer.defaults;
  const claimed = await claimer.post('/api/claim', { workId: 'W-1' });
  expect(claimed.status, claimed.text).toBe(200);

  // Holding W-1, it may watch the board's events and see W-1 in a snapshot, and only W-1.
  const socket = await openSocket(srv.url, bearer);
  socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'], snapshot: true });
  const answer = await socket.next((m) => m.type === 'subscribed' || m.type === 'error');
  expect(answer.type, `a holder’s subscribe was refused: ${JSON.stringify(answer.error)}`).toBe('subscribed');
  const snapshot = await socket.next((m) => m.type === 'snapshot' && m.last === true);
  expect(snapshot.items.map((i: { workId: string; title: string }) => `${i.workId} ${i.title}`)).toEqual(['W-1 one']);
  /** The next event the socket is sent: its type and item. */
  const nextEvent = async () => {
    const m = await socket.next((m) => m.type === 'event', 3000);
    return `${m.event.type} ${m.event.workId}`;
  };

  await planner.post('/api/items/W-2/comments', { text: 'not held: not its business' });
  await planner.post('/api/items/W-1/comments', { text: 'about the work it holds' });
  expect(await nextEvent(), 'the holder was not sent its item’s event').toBe('item.comment W-1');

  const released = await claimer.post('/api/lease', { leaseId: claimed.body.leaseId, action: 'release' });
  expect(released.status, released.text).toBe(200);
  expect(await nextEvent()).toBe('lease.released W-1');
  await planner.post('/api/items/W-1/comments', { text: 'after the lease: not its business' });
  expect((await claimer.post('/api/claim', { workId: 'W-3' })).status).toBe(200);
  expect(await nextEvent(), 'the item’s events outlived the lease').toBe('lease.granted W-3');
  socket.ws.close();
});
