// A LeaseKeeper across a node restart (its renewals refused a connection meanwhile),
// then its socket, reconnected, telling it of a block.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BoardClient, BoardSocket, LeaseKeeper } from '@agent-board/client';
import { newBoard } from '../support/board.js';
import { startBrowserServer } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tempDir, type TempDir } from '../support/temp.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';

const ENV = { LEASE_MIN_TTL_SECONDS: '1' };
let dir: TempDir;
let srv: TestServer;
beforeAll(async () => {
  dir = await tempDir();
  srv = await startBrowserServer(ENV, await openEmbeddedStore(dir.path));
});
afterAll(async () => {
  await srv?.stop();
  await dir?.remove();
});

it('keeps a lease through a node restart, and hears a block on the reconnected socket', async () => {
  const board = await newBoard(srv.url);
  const agent = await board.agent('kept');
  const token = agent.defaults.authorization!.slice('Bearer '.length);
  const client = new BoardClient({ baseUrl: srv.url, token });
  const socket = new BoardSocket({
    baseUrl: srv.url,
    token,
    principal: agent.principal,
    backoff: { initialMs: 50, maxMs: 300 },
  });
  await socket.connect();
  try {
    await client.post('/api/items/batch', { body: { items: [{ title: 'through a restart' }] } });
    const lease = await client.post('/api/claim', { body: { workId: 'W-1', ttlSeconds: 4 } });
    const keeper = new LeaseKeeper({ client, lease, socket, boardId: board.projectId });
    const renewed: string[] = [];
    keeper.on('renewed', (g) => renewed.push(g.expiresAt));
    await new Promise((r) => setTimeout(r, 1500));
    const { hostname, port, origin } = new URL(srv.url);
    await srv.stop();
    await new Promise((r) => setTimeout(r, 1000));
    const again = await startTestServer(
      { ...ENV, HOST: hostname, PORT: port, PUBLIC_URL: origin },
      await openEmbeddedStore(dir.path),
    );
    srv = { ...again, url: srv.url };
    await new Promise((r) => setTimeout(r, 6000));
    expect(keeper.keeping).toBe(true);
    expect((await agent.get('/api/items/W-1')).body.lease?.fencingToken).toBe(lease.fencingToken);
    await new Promise((r) => setTimeout(r, 500));
    expect(socket.state).toBe('open');
    const blocked = await board.owner.post(`/api/items/W-1/state?projectId=${board.projectId}`, {
      action: 'block',
      reason: 'stop',
    });
    expect(blocked.status).toBe(200);
    const loss = await Promise.race([keeper.lost, new Promise((r) => setTimeout(() => r(null), 1000))]);
    expect(loss).toMatchObject({ reason: 'revoked', source: 'socket' });
  } finally {
    socket.close();
  }
}, 60_000);
