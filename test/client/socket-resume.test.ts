// BoardSocket's resume against a running server: the connection is cut mid-stream twice while an
// agent keeps writing, once by the network (a relay severs it, no close frame) and once by the
// server itself (the node shuts down, close 1001, and comes back on the same address and data).
// Each time the socket reconnects with backoff and resubscribes with `since`, and its listeners
// get every event of the board exactly once, in seq order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoardSocket, openWebSocket, type ClientMessage, type LoggedEvent } from '@agent-board/client';
import { newBoard } from '../support/board.js';
import { startBrowserServer } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tempDir, type TempDir } from '../support/temp.js';
import { pace, until } from '../support/until.js';
import { startRelay, type Relay } from '../browser/relay.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';

/** Budgets a hundred times Free's: the writer writes far more than 120 items a minute. */
const ENV = { BOARD_RATE_SCALE: '100' };
let dir: TempDir;
let srv: TestServer;
let relay: Relay;
beforeAll(async () => {
  dir = await tempDir();
  // A fixed address, so that the node can come back where the relay and the agents look for it.
  srv = await startBrowserServer(ENV, await openEmbeddedStore(dir.path));
  relay = await startRelay();
  relay.to(srv.url);
});
afterAll(async () => {
  await relay?.close();
  await srv?.stop();
  await dir?.remove();
});

/** The node stops (its sockets closed with 1001), `meanwhile` runs, and the node starts again on the same address and data. */
async function restart(meanwhile: () => void): Promise<void> {
  const { hostname, port, origin } = new URL(srv.url);
  await srv.stop();
  meanwhile();
  const again = await startTestServer(
    { ...ENV, HOST: hostname, PORT: port, PUBLIC_URL: origin },
    await openEmbeddedStore(dir.path),
  );
  srv = { ...again, url: srv.url };
}

describe('BoardSocket through dropped connections', () => {
  it(
    'resumes by since after a network cut and a node restart mid-stream: every event once, in order',
    { timeout: 120_000 },
    async () => {
      const board = await newBoard(srv.url);
      const writer = await board.agent('writer');
      const watcher = await board.agent('watcher');
      const sent: ClientMessage[] = [];
      const socket = new BoardSocket({
        baseUrl: relay.origin,
        token: watcher.defaults.authorization!.slice('Bearer '.length),
        backoff: { initialMs: 50, maxMs: 400 },
        // The platform's socket, with what it sends recorded.
        webSocket: async (url, headers) => {
          const ws = await openWebSocket(url, headers);
          const send = ws.send.bind(ws);
          ws.send = (data) => (sent.push(JSON.parse(data) as ClientMessage), send(data));
          return ws;
        },
      });
      const events: LoggedEvent[] = [];
      const closes: { code: number; reconnecting: boolean }[] = [];
      socket.on('event', (e) => events.push(e));
      socket.on('close', (c) => closes.push(c));
      await socket.connect();
      await socket.subscribe(board.projectId, { topics: ['activity'] });

      // The writer makes an item at a time, without pause, and waits out the node's absence.
      let writing = true;
      const written = (async () => {
        for (let n = 0; writing;) {
          const res = await writer.post('/api/items', { title: `item ${n}` }).catch(() => null);
          if (res?.status === 201) n++;
          await pace(res?.status === 201 ? 5 : 50);
        }
      })();
      /** The board's last seq, read through the owner (a node just started answers 503 for a moment). */
      const lastSeq = async (): Promise<number> => {
        let seq = 0;
        await until(
          async () => {
            const status = await board.owner.get(`/api/status?projectId=${board.projectId}`);
            if (status.status !== 200 && status.status !== 503) throw new Error(`status: ${status.text}`);
            return status.status === 200 && ((seq = status.body.lastSeq), true);
          },
          { timeout: 10_000, interval: 100, what: 'the board’s status (503 while the node starts)' },
        );
        return seq;
      };
      const seen = () => events.at(-1)?.seq ?? 0;

      // 1. The network cuts the connection mid-stream; the board moves on while the socket is away.
      await expect.poll(seen, { timeout: 20_000 }).toBeGreaterThanOrEqual(20);
      relay.cut();
      const atCut = await lastSeq();
      await expect.poll(lastSeq, { timeout: 20_000 }).toBeGreaterThanOrEqual(atCut + 30);
      relay.restore();
      const atRestore = await lastSeq();
      await expect.poll(seen, { timeout: 20_000 }).toBeGreaterThanOrEqual(atRestore);

      // 2. The server drops it: the node shuts down, and comes back after the board moved on again.
      await restart(() => relay.cut()); // (the relay kept shut until the writer has written on the new node)
      const atStart = await lastSeq();
      await expect.poll(lastSeq, { timeout: 20_000 }).toBeGreaterThanOrEqual(atStart + 30);
      relay.restore();
      const atReturn = await lastSeq();
      await expect.poll(seen, { timeout: 20_000 }).toBeGreaterThanOrEqual(atReturn);

      writing = false;
      await written;
      const final = await lastSeq();
      await expect.poll(seen, { timeout: 20_000 }).toBe(final);
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: final }, (_, i) => i + 1));
      expect(events.every((e) => e.boardId === board.projectId && e.event.type === 'item.created')).toBe(true);

      // Two drops, each resumed by since from the last event counted, with nothing in between skipped.
      expect(closes.filter((c) => c.reconnecting).map((c) => c.code)).toEqual(expect.arrayContaining([1006, 1001]));
      const subscribes = sent.filter((m): m is Extract<ClientMessage, { type: 'subscribe' }> => m.type === 'subscribe');
      expect(subscribes[0]).not.toHaveProperty('since');
      const resumes = subscribes.slice(1);
      expect(resumes.length).toBeGreaterThanOrEqual(2);
      expect(resumes.every((m) => typeof m.since === 'number')).toBe(true);
      expect(resumes[0]!.since).toBeLessThan(atRestore);
      expect(resumes.at(-1)!.since).toBeLessThan(atReturn);
      socket.close();
      expect(socket.state).toBe('closed');
    },
  );

  it('stops for good when the server revokes the credential (close 4001)', async () => {
    const board = await newBoard(srv.url);
    const issued = await board.owner.post('/api/accounts/tokens', {
      name: 'doomed',
      scope: 'workspace',
      projectId: board.projectId,
    });
    const socket = new BoardSocket({
      baseUrl: srv.url,
      token: issued.body.secret,
      backoff: { initialMs: 50, maxMs: 100 },
    });
    const closes: { code: number; reconnecting: boolean }[] = [];
    socket.on('close', (c) => closes.push(c));
    await socket.connect();
    await board.owner.request('DELETE', `/api/accounts/tokens/${issued.body.token.id}`);
    await expect.poll(() => socket.state, { timeout: 10_000 }).toBe('closed');
    expect(closes).toEqual([{ code: 4001, reason: 'the credential was revoked', reconnecting: false }]);
    const refused = new BoardSocket({ baseUrl: srv.url, token: issued.body.secret });
    await expect(refused.connect()).rejects.toThrow(/closed/);
  });
});
