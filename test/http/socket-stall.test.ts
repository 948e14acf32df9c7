// A sender waiting for a socket's client to read (a replay, a snapshot's pages) is not left waiting
// without end: a client that reads nothing for SLOW_CONSUMER.stalledMs is a slow consumer (4008);
// one that reads at all, however slowly, is not. On a simulated uWS socket and simulated time.
import type uWS from 'uWebSockets.js';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { PublishBatch } from '../../src/http/uws/publish-batch.js';
import { SocketConnection, type SocketData, type SocketPool } from '../../src/http/uws/socket-connection.js';
import { CLOSE, SLOW_CONSUMER } from '../../src/ws/protocol.js';
import { workspaceToken } from '../support/identities.js';

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

/** A socket whose client has read nothing of `unread` bytes yet; `read(left)` says how much is still unread. */
function socketWith(unread: number) {
  let buffered = 0;
  const ended: number[] = [];
  const ws = {
    getBufferedAmount: () => buffered,
    send: (message: string) => ((buffered += Buffer.byteLength(message)), 1),
    cork: (write: () => void) => write(),
    end: (code: number) => void ended.push(code),
  } as unknown as uWS.WebSocket<SocketData>;
  const pool: SocketPool = {
    queued: () => undefined,
    joinedTopics: () => undefined,
    closed: () => undefined,
    ended: () => undefined,
  };
  const batch = { waiting: () => false, flush: () => undefined } as unknown as PublishBatch;
  const conn = new SocketConnection(1, ws, workspaceToken(), { cap: SLOW_CONSUMER.bytes, pool, batch });
  expect(conn.send('x'.repeat(unread))).toBe(true);
  conn.flush();
  const read = (left: number) => {
    buffered = left;
    conn.onDrain();
  };
  return { conn, ended, read };
}

it('closes a socket whose client reads nothing while a sender waits for it, and wakes the sender', async () => {
  const { conn, ended } = socketWith(300 * 1024);
  const drained = conn.drained();
  vi.advanceTimersByTime(SLOW_CONSUMER.stalledMs - 1);
  expect(ended).toEqual([]);
  vi.advanceTimersByTime(1);
  expect(ended).toEqual([CLOSE.slowConsumer]);
  await drained;
});

it('leaves open a socket whose client reads slowly, and one that read everything', async () => {
  const { conn, ended, read } = socketWith(300 * 1024);
  const drained = conn.drained();
  for (let left = 200 * 1024; left >= 0; left -= 100 * 1024) {
    vi.advanceTimersByTime(SLOW_CONSUMER.stalledMs - 1);
    read(left);
  }
  await drained;
  vi.advanceTimersByTime(2 * SLOW_CONSUMER.stalledMs);
  expect(ended).toEqual([]);
});
