// What one WebSocket may cost the node (hardening issue), over a real socket: the subscribe
// flood that stalled /healthz, the per-socket message budget and subscription cap, merged
// repeated subscribes, and oversized messages closed with 1009.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { signedUp, startTestServer, type TestServer } from '../support/server.js';
import { provisionProject } from '../../src/accounts/projects.js';
import { openSocket } from '../support/socket.js';
import { pace } from '../support/until.js';
import { CLOSE, SOCKET_BUDGET } from '../../src/ws/protocol.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ BOARD_RATE_SCALE: '100' });
});
afterAll(async () => {
  await srv.stop();
});

const bearerOf = (client: { defaults: Record<string, string> }) => ({ authorization: client.defaults.authorization! });

describe('one socket’s cost', () => {
  it('survives 1,000 subscribes with since: 0 on a 1,500-event board: /healthz keeps answering (well under 500 ms), and the socket is closed over budget', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('flooder');
    for (let made = 0; made < 1500; made += 500) {
      const res = await agent.post('/api/items/batch', {
        items: Array.from({ length: 500 }, (_, i) => ({ title: `event ${made + i}` })),
      });
      expect(res.status).toBe(201);
    }
    const socket = await openSocket(srv.url, bearerOf(agent));
    let probing = true;
    const probes: number[] = [];
    const prober = (async () => {
      while (probing) {
        const started = performance.now();
        const res = await fetch(`${srv.url}/healthz`);
        await res.text();
        probes.push(performance.now() - started);
        await pace(10);
      }
    })();
    for (let i = 0; i < 1000; i++) socket.send({ type: 'subscribe', boardId: board.projectId, since: 0 });
    const closed = await socket.closed;
    await pace(300); // and probes a while after the close, as the node settles
    probing = false;
    await prober;
    expect(closed.code).toBe(CLOSE.overBudget);
    expect(closed.reason).toMatch(/budget/);
    expect(probes.length).toBeGreaterThan(5);
    // Unguarded, this replay blocks the node for seconds; the 100 ms goal itself is the benchmark's
    // (bench/sockets.ts, part 3: a busy 2-core CI machine missed it by 1 ms), the test keeps a
    // margin that still tells them apart.
    expect(Math.max(...probes)).toBeLessThan(500);
  });

  it('merges a repeated subscribe into the live one: one replay, the topics joined', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('merger');
    await agent.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }] });
    const socket = await openSocket(srv.url, bearerOf(agent));
    socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['items'], since: 0 });
    const first = await socket.next((m) => m.type === 'subscribed');
    expect(first.seq).toBe(0);
    const replayed = [await socket.next((m) => m.type === 'event'), await socket.next((m) => m.type === 'event')];
    expect(replayed.map((m) => m.seq)).toEqual([1, 2]);
    socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['shouts'], since: 0 });
    const merged = await socket.next((m) => m.type === 'subscribed');
    expect(merged).toMatchObject({ merged: true, seq: 2 });
    expect(merged.topics.sort()).toEqual(['items', 'shouts']);
    // No second replay: the next event is the next commit, once.
    await agent.post('/api/items', { title: 'three' });
    const next = await socket.next((m) => m.type === 'event');
    expect(next.seq).toBe(3);
    await agent.post('/api/shouts', { text: 'heard through the merged topic' });
    expect((await socket.next((m) => m.type === 'shout')).shout.text).toBe('heard through the merged topic');
    socket.ws.close();
  });

  it(`caps the boards one socket watches at ${SOCKET_BUDGET.subscriptions}`, async () => {
    const { client, accountId } = await signedUp(srv.url);
    const boards = [];
    for (let i = 0; i <= SOCKET_BUDGET.subscriptions; i++)
      boards.push((await provisionProject(srv.store, accountId, `watched ${i}`, Date.now()))._id);
    const socket = await openSocket(srv.url, { cookie: `board_session=${client.cookies.get('board_session')}` });
    for (const boardId of boards.slice(0, SOCKET_BUDGET.subscriptions)) {
      socket.send({ type: 'subscribe', boardId });
      expect((await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).type).toBe('subscribed');
    }
    socket.send({ type: 'subscribe', boardId: boards.at(-1) });
    const refused = await socket.next((m) => m.type === 'subscribed' || m.type === 'error');
    expect(refused.error).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', status: 429 });
    socket.send({ type: 'unsubscribe', boardId: boards[0] });
    await socket.next((m) => m.type === 'unsubscribed');
    socket.send({ type: 'subscribe', boardId: boards.at(-1) });
    expect((await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).type).toBe('subscribed');
    socket.ws.close();
  });

  it('closes a socket sending more than 64 KiB in one message with 1009 and a reason', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('big-talker');
    const socket = await openSocket(srv.url, bearerOf(agent));
    socket.ws.send(JSON.stringify({ type: 'ping', pad: 'x'.repeat(1024 * 1024) }));
    const closed = await socket.closed;
    expect(closed.code).toBe(1009);
    expect(closed.reason).toMatch(/too big/);
  });
});
