// A LeaseKeeper whose socket (connected as docs/agents.md's example does, subscribed to nothing)
// drops while the lease is revoked. The socket reconnects, but resumes only subscribed boards by
// `since`; the holder's lease.revoked went out while it was away and is never replayed. The keeper,
// told nothing, once renewed only at a third of the TTL, so its owner worked on for minutes; it now
// renews when the socket reconnects. docs: "When ... the socket says the lease expired or was
// revoked, it tells its owner at once".
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BoardClient, BoardSocket, LeaseKeeper } from '@agent-board/client';
import { newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startRelay, type Relay } from '../browser/relay.js';

let srv: TestServer;
let relay: Relay;
beforeAll(async () => {
  srv = await startTestServer();
  relay = await startRelay();
  relay.to(srv.url);
});
afterAll(async () => {
  await relay?.close();
  await srv?.stop();
});

it('tells its owner of a revocation that happened while its socket was reconnecting', async () => {
  const board = await newBoard(srv.url);
  const agent = await board.agent('dropped');
  const token = agent.defaults.authorization!.slice('Bearer '.length);
  const client = new BoardClient({ baseUrl: srv.url, token });
  const socket = new BoardSocket({
    baseUrl: relay.origin,
    token,
    principal: agent.principal,
    backoff: { initialMs: 50, maxMs: 200 },
  });
  await socket.connect();
  try {
    await client.post('/api/items/batch', { body: { items: [{ title: 'blocked while away' }] } });
    const lease = await client.post('/api/claim', { body: { workId: 'W-1', ttlSeconds: 600 } });
    const keeper = new LeaseKeeper({ client, lease, socket, boardId: board.projectId });
    relay.cut();
    await expect.poll(() => socket.state, { timeout: 5_000 }).not.toBe('open');
    const blocked = await board.owner.post(`/api/items/W-1/state?projectId=${board.projectId}`, {
      action: 'block',
      reason: 'wrong approach',
    });
    expect(blocked.status).toBe(200);
    relay.restore();
    await expect.poll(() => socket.state, { timeout: 10_000 }).toBe('open');
    const loss = await Promise.race([keeper.lost, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
    expect(keeper.keeping ? 'still keeping a revoked lease' : 'told').toBe('told');
    expect(loss).toMatchObject({ reason: 'revoked', workId: 'W-1' });
  } finally {
    socket.close();
  }
}, 40_000);
