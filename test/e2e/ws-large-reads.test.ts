// What a subscribe sends before going live, on a board whose content is large but within the
// documented limits: each message fits under the socket's 1 MiB backlog cap and goes at the pace
// the client reads, so a client that reads is never closed as a slow consumer (4008); one that
// stops reading during its replay is, once the live events held for it pass the cap.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { SLOW_CONSUMER_REASON } from '../../src/ws/protocol.js';
import { startTestServer, type Client, type TestServer } from '../support/server.js';
import { openSocket, type TestSocket } from '../support/socket.js';
import { until } from '../support/until.js';
import { closeFrame, stalledSocket } from '../../bench/raw-socket.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({
    BOARD_RATE_SCALE: '100',
    ADDRESS_RATE_PER_MINUTE: '100000',
    BODY_LIMIT_BYTES: String(8 * 1024 * 1024),
  });
});
afterAll(async () => {
  await srv.stop();
});

const bearerOf = (client: { defaults: Record<string, string> }) => ({ authorization: client.defaults.authorization! });
/** Text of `n` characters, most of them three bytes in UTF-8. */
const long = (n: number, prefix: string) => `${prefix} `.padEnd(n, '€');

/** Posts `n` shouts of 2,000 characters, 25 at a time. */
async function shout(agent: Client, n: number): Promise<void> {
  for (let i = 0; i < n; i += 25)
    await Promise.all(
      Array.from({ length: Math.min(25, n - i) }, async (_, j) => {
        const res = await agent.post('/api/shouts', { text: long(2000, `${i + j}`) });
        expect(res.status, res.text.slice(0, 200)).toBe(201);
      }),
    );
}

/** What `read` reads off the socket; the socket's close, if it comes first, fails it with the close code. */
async function beforeClose<T>(socket: TestSocket, read: () => Promise<T>): Promise<T> {
  const closed = socket.closed.then((c) => ({ closed: c }));
  const first = await Promise.race([read().then((value) => ({ value })), closed]);
  if ('closed' in first) throw new Error(`closed ${first.closed.code}: ${first.closed.reason}`);
  return first.value;
}

/** The socket is still open and read: a ping sent after everything else is answered. */
async function stillOpen(socket: TestSocket): Promise<void> {
  socket.send({ type: 'ping' });
  await beforeClose(socket, () => socket.next((m) => m.type === 'pong', 20_000));
}

it('sends a snapshot whose newest events and shouts with its cards pass 1 MiB, in pages the client joins', async () => {
  const board = await newBoard(srv.url);
  const agent = await board.agent('a');
  const made = await agent.post('/api/items/batch', {
    items: Array.from({ length: 500 }, (_, i) => ({ title: long(200, `${i}`), description: long(4000, '') })),
  });
  expect(made.status, made.text.slice(0, 200)).toBe(201);
  await shout(agent, 50);

  const socket = await openSocket(srv.url, bearerOf(agent));
  socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'], snapshot: true });
  const pages = await beforeClose(socket, async () => {
    const read = [];
    for (let m = await socket.next((x) => x.type === 'snapshot', 20_000); ; m = await socket.next(undefined, 20_000)) {
      expect(m.type).toBe('snapshot');
      read.push(m);
      if (m.last) return read;
    }
  });
  expect(pages.flatMap((p) => p.items)).toHaveLength(500);
  expect(pages.flatMap((p) => p.recent ?? [])).toHaveLength(50);
  expect(pages.flatMap((p) => p.shouts ?? [])).toHaveLength(50);
  await stillOpen(socket);
  socket.ws.close();
}, 90_000);

it('sends the shouts a resuming client missed, 1.2 MB of them, without closing it', async () => {
  const board = await newBoard(srv.url);
  const agent = await board.agent('a');
  const first = await agent.post('/api/shouts', { text: 'before' });
  expect(first.status, first.text).toBe(201);
  await shout(agent, 200);

  const socket = await openSocket(srv.url, bearerOf(agent));
  socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['shouts'], shoutsAfter: first.body.id });
  const texts = await beforeClose(socket, async () => {
    const read: string[] = [];
    while (read.length < 200) read.push((await socket.next((m) => m.type === 'shout', 20_000)).shout.text);
    return read;
  });
  expect(new Set(texts).size).toBe(200);
  await stillOpen(socket);
  socket.ws.close();
}, 90_000);

it('closes a socket that stops reading during its replay once the live events held for it pass the cap', async () => {
  const board = await newBoard(srv.url);
  const agent = await board.agent('a');
  const batch = async (n: number) => {
    const items = Array.from({ length: 500 }, (_, i) => ({ title: `item ${n}-${i}`, description: 'd'.repeat(3900) }));
    expect((await agent.post('/api/items/batch', { items })).status).toBe(201);
  };
  for (let n = 0; n < 2; n++) await batch(n); // 2 MB of log: more than the socket takes in before it stalls
  const open = async () => ((await fetch(`${srv.url}/readyz`).then((r) => r.json())) as { sockets: number }).sockets;
  const before = await open();
  const stalled = await stalledSocket(srv.url, bearerOf(agent), {
    type: 'subscribe',
    boardId: board.projectId,
    topics: ['activity'],
    since: 0,
  });
  await until(async () => (await open()) === before + 1);
  // 2 MB of live events a batch, until the node lets the socket go (or 12 MB went by).
  for (let n = 2; n < 8 && (await open()) > before; n++) await batch(n);
  await until(async () => (await open()) === before, 10_000);
  expect(await closeFrame(stalled)).toEqual({ code: 4008, reason: SLOW_CONSUMER_REASON });
}, 120_000);
