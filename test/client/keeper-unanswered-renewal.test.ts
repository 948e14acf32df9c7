// LeaseKeeper and a renewal that gets no answer at all (a board, or anything in between, that
// accepts the request and never answers). docs/agents.md: the keeper "retries a renewal that got no
// answer until the lease must have run out" and tells its owner (reason `unreachable`, "no renewal
// got through before it ran out"). A renewal in flight once had no time-out: the keeper waited on
// it (fetch's own limit is 300 s), so the lease ran out on the board while its owner heard nothing.
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BoardClient, LeaseKeeper, type LeaseLoss } from '@agent-board/client';
import { newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ LEASE_MIN_TTL_SECONDS: '1' });
});
afterAll(async () => {
  await srv.stop();
});

/** A proxy to the server that, once silenced, swallows what clients send (nothing is answered). */
async function silencingProxy(port: number) {
  let silent = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    const upstream = net.connect(port, '127.0.0.1');
    sockets.add(upstream);
    client.on('data', (chunk) => void (silent || upstream.write(chunk)));
    upstream.on('data', (chunk) => void (silent || client.write(chunk)));
    for (const s of [client, upstream]) s.on('error', () => s.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    silence: () => void (silent = true),
    close: () => new Promise<void>((resolve) => (sockets.forEach((s) => s.destroy()), server.close(() => resolve()))),
  };
}

it('tells its owner the lease is gone once it must have run out, when a renewal never gets an answer', async () => {
  const proxy = await silencingProxy(Number(new URL(srv.url).port));
  try {
    const board = await newBoard(srv.url);
    const agent = await board.agent('silenced');
    const token = agent.defaults.authorization!.slice('Bearer '.length);
    const client = new BoardClient({ baseUrl: proxy.url, token });
    await client.post('/api/items/batch', { body: { items: [{ title: 'kept through a silence' }] } });
    const lease = await client.post('/api/claim', { body: { workId: 'W-1', ttlSeconds: 2 } });
    const keeper = new LeaseKeeper({ client, lease });
    proxy.silence(); // the first renewal (about 0.7 s in) goes out and is never answered
    const started = Date.now();
    const told = await Promise.race([
      keeper.lost,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 8_000)),
    ]);
    // The board's own clock ends the lease too: at its expiry, its commit a moment after (the keeper
    // may tell its owner first, on a busy machine).
    await expect
      .poll(async () => (await agent.get(`/api/items/W-1`)).body.state, { timeout: 5_000, interval: 100 })
      .toBe('ready');
    keeper.stop();
    expect(told, `no loss told ${Date.now() - started} ms after the lease ran out at 2 s`).toMatchObject({
      reason: 'unreachable',
      workId: 'W-1',
    } satisfies Partial<LeaseLoss>);
  } finally {
    await proxy.close();
  }
}, 20_000);
