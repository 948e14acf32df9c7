// Two nodes never answer from a stale board (issue 48): with the bus down, a board's home moves
// to the other node, which commits (a release, a new grant, another release), then back; the
// first node's repeated claim and refused claim are answered from the board as it stands in the
// store, not from the copy it held before. Over real HTTP, two nodes on one store, homes in a real
// Redis, each node's bus on a Redis of its own that is killed.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import { RedisBus } from '../../src/bus/redis.js';
import { RedisHomes } from '../../src/cluster/redis-homes.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { canRunRedis, ownRedis, type OwnRedis } from '../support/redis-server.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';
import { tempDir, unique } from '../support/temp.js';
import { until } from '../support/until.js';

const haveRedis = inject('redisUrl') !== null && canRunRedis;

describe.skipIf(!haveRedis)('answers while the bus is down and the home moves', () => {
  let homesRedis: OwnRedis;
  let busRedis: OwnRedis;
  let keys: Redis;
  let a: TestServer;
  let b: TestServer;
  let remove: () => Promise<void>;
  /** Boards each node lost the home of (its renewal found the lease gone). */
  const lost = { a: new Set<string>(), b: new Set<string>() };
  const busOf = async (node: TestServer) => (await new Client(node.url).get('/readyz')).body.bus;

  beforeAll(async () => {
    homesRedis = await ownRedis();
    busRedis = await ownRedis();
    keys = new Redis(homesRedis.url);
    const dir = await tempDir();
    remove = dir.remove;
    const store = await openEmbeddedStore(dir.path);
    const homes = (node: 'a' | 'b') =>
      new RedisHomes(homesRedis.url, {
        onChange: (boardId, change) => (change === 'lost' ? lost[node].add(boardId) : lost[node].delete(boardId)),
      });
    a = await startTestServer({ NODE_ID: unique('node-a') }, store, new RedisBus(busRedis.url), homes('a'));
    b = await startTestServer({ NODE_ID: unique('node-b') }, store, new RedisBus(busRedis.url), homes('b'));
    await until(async () => (await busOf(a)) === 'ok' && (await busOf(b)) === 'ok');
  });
  afterAll(async () => {
    keys.disconnect();
    await a.stop();
    await b.stop();
    homesRedis.kill();
    busRedis.kill();
    await remove();
  });

  /** Takes the board's home from whichever node holds it, once that node has noticed. */
  async function moveHomeFrom(node: 'a' | 'b', boardId: string): Promise<void> {
    expect(await keys.del(`home:${boardId}`)).toBe(1);
    await until(() => lost[node].has(boardId));
  }

  it('answers a repeated claim and a refused claim from the board as stored, not from the copy held before the home moved away', async () => {
    const board = await newBoard(a.url);
    const at = (node: TestServer, agent: Client) => new Client(node.url, agent.defaults);
    const [w13, w7, x, y] = [
      await board.agent('w13'),
      await board.agent('w7'),
      await board.agent('x'),
      await board.agent('y'),
    ];
    // b becomes the board's home and holds it: W-1 claimed by w13, W-2 by x.
    expect((await at(b, w13).post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }] })).status).toBe(
      201,
    );
    const first = await at(b, w13).post('/api/claim', { workId: 'W-1' });
    expect(first.status).toBe(200);
    const held = await at(b, x).post('/api/claim', { workId: 'W-2' });
    expect(held.status).toBe(200);

    busRedis.kill();
    await until(async () => (await busOf(a)) === 'degraded' && (await busOf(b)) === 'degraded');

    // The home moves to a, which commits what b never hears of.
    await moveHomeFrom('b', board.projectId);
    expect((await at(a, w13).post('/api/lease', { leaseId: first.body.leaseId, action: 'release' })).status).toBe(200);
    const second = await at(a, w7).post('/api/claim', { workId: 'W-1' });
    expect(second.status).toBe(200);
    expect(second.body.fencingToken).toBeGreaterThan(first.body.fencingToken);
    expect((await at(a, x).post('/api/lease', { leaseId: held.body.leaseId, action: 'release' })).status).toBe(200);

    // Back to b: its answers are those of the board as stored.
    await moveHomeFrom('a', board.projectId);
    const stale = await at(b, w13).post('/api/claim', { workId: 'W-1' });
    expectError(stale, 409, 'ITEM_NOT_READY');
    expect(stale.body.error.details).toMatchObject({ workId: 'W-1', holder: w7.principal });
    const repeated = await at(b, w7).post('/api/claim', { workId: 'W-1' });
    expect(repeated.status).toBe(200);
    expect(repeated.body.leaseId).toBe(second.body.leaseId);
    const freed = await at(b, y).post('/api/claim', { workId: 'W-2' });
    expect(freed.status).toBe(200);
    expect(freed.body.fencingToken).toBeGreaterThan(held.body.fencingToken);

    await busRedis.start();
  });
});
