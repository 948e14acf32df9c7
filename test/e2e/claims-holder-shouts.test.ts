// A `claims` token hears the shouts about the item it holds while it holds it, as it reads the item
// (src/board/visibility.ts: the shouts about an item by the one rule, seesItem): GET /api/shouts
// lists them, and GET /api/shouts?workId= answers them, and its socket is sent them as they land.
// They once went by the work ids the token names alone: its holder heard nothing of its own work.
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

it('tells a claims token the shouts about the item it holds while it holds it, over REST and its socket', async () => {
  const board = await newBoard(srv.url);
  const planner = await board.agent('planner');
  await planner.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }] });
  const claimer = await board.resourceAgent('claimer', ['claims']);
  const claimed = await claimer.post('/api/claim', { workId: 'W-1' });
  expect(claimed.status, claimed.text).toBe(200);
  const shout = async (text: string, workId?: string) =>
    expect((await planner.post('/api/shouts', { text, ...(workId && { workId }) })).status).toBe(201);
  const texts = (res: { body: { shouts: { text: string }[] } }) => res.body.shouts.map((s) => s.text);

  const socket = await openSocket(srv.url, claimer.defaults);
  socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['shouts'] });
  const answer = await socket.next((m) => m.type === 'subscribed' || m.type === 'error');
  expect(answer.type, JSON.stringify(answer)).toBe('subscribed');
  // The planner's socket tells when the board's lease events have gone out to the sockets.
  const watch = await openSocket(srv.url, planner.defaults);
  watch.send({ type: 'subscribe', boardId: board.projectId, topics: ['leases'] });
  expect((await watch.next((m) => m.type === 'subscribed' || m.type === 'error')).type).toBe('subscribed');
  const nextShout = async () => (await socket.next((m) => m.type === 'shout', 3000)).shout.text as string;

  await shout('W-2 is not its business', 'W-2');
  await shout('W-1: mind the migration', 'W-1');
  expect(await nextShout(), 'the holder’s socket was not sent the shout about its item').toBe(
    'W-1: mind the migration',
  );
  const all = await claimer.get('/api/shouts');
  expect(all.status, all.text).toBe(200);
  expect(texts(all), 'GET /api/shouts left out the shout about the item it holds').toEqual(['W-1: mind the migration']);
  const about = await claimer.get('/api/shouts?workId=W-1');
  expect(about.status, about.text).toBe(200);
  expect(texts(about)).toEqual(['W-1: mind the migration']);

  // Its lease ended, the item's shouts are none of its business: the next it hears is a broadcast.
  const released = await claimer.post('/api/lease', { leaseId: claimed.body.leaseId, action: 'release' });
  expect(released.status, released.text).toBe(200);
  expect((await watch.next((m) => m.type === 'event', 3000)).event.type).toBe('lease.released');
  await shout('W-1: after the lease', 'W-1');
  await shout('to everyone');
  expect(await nextShout(), 'the item’s shouts outlived the lease').toBe('to everyone');
  expect((await claimer.get('/api/shouts?workId=W-1')).status).toBe(403);
  socket.ws.close();
  watch.ws.close();
});
