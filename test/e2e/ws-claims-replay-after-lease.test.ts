// A `claims` token reads an item only while it holds the lease (visibility.ts, RESOURCE_TOKEN_VIEW).
// After the lease ended, REST's log (GET /api/activity) shows nothing of the item but the token's
// own lease events, and so does a socket subscribe with `since`: a replay is judged by the leases
// held at the subscription's start. It once replayed the old grant through followLease, which
// opened the item again for the replayed span.
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

it('sends a claims token, after its lease ended, no events of the item that REST would not show it', async () => {
  const board = await newBoard(srv.url);
  const planner = await board.agent('planner');
  await planner.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }, { title: 'three' }] });
  const claimer = await board.resourceAgent('claimer', ['claims']);
  const bearer = claimer.defaults;

  // It held W-1 for a while; a comment about W-1 was written then; it released W-1.
  const first = await claimer.post('/api/claim', { workId: 'W-1' });
  expect(first.status, first.text).toBe(200);
  await planner.post('/api/items/W-1/comments', { text: 'written while W-1 was held' });
  expect((await claimer.post('/api/lease', { leaseId: first.body.leaseId, action: 'release' })).status).toBe(200);
  // Now it holds W-3 (so its log reads are let in at all).
  expect((await claimer.post('/api/claim', { workId: 'W-3' })).status).toBe(200);

  // REST: the log as this token sees it now holds no W-1 event but its own lease's.
  const rest = await claimer.get('/api/activity?limit=200');
  expect(rest.status, rest.text).toBe(200);
  const restW1 = (rest.body.events as { type: string; workId: string | null }[])
    .filter((e) => e.workId === 'W-1' && !e.type.startsWith('lease.'))
    .map((e) => e.type);
  expect(restW1).toEqual([]);

  // The socket, replaying the same log from seq 0, must agree with REST.
  const socket = await openSocket(srv.url, bearer);
  socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'], since: 0 });
  const answer = await socket.next((m) => m.type === 'subscribed' || m.type === 'error');
  expect(answer.type, JSON.stringify(answer)).toBe('subscribed');
  const seen: string[] = [];
  for (;;) {
    const m = await socket.next((x) => x.type === 'event', 2000).catch(() => null);
    if (!m) break;
    if (m.event.workId === 'W-1' && !String(m.event.type).startsWith('lease.')) seen.push(m.event.type);
    if (m.event.type === 'lease.granted' && m.event.workId === 'W-3') break;
  }
  socket.ws.close();
  expect(seen, 'the replay sent events of W-1 after its lease ended (REST shows none)').toEqual([]);
});
