// What a node receives of the other nodes' commits: only those of the boards it has asked for, the
// boards its sockets watch or it holds as their home. A socket open on a node does not make it
// receive every board's events (it did: any open socket made a node parse every commit of the
// cluster, and Redis sent every commit to every node); a holder's socket there still hears its
// lease end, as a notice. Two nodes on one Redis, counted by the receiving node's /metrics.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { scrape } from '../support/metrics.js';
import { twoNodesOnRedis, type RedisNodes } from '../support/redis-nodes.js';
import { openSocket } from '../support/socket.js';

const url = inject('redisUrl');
const TOKEN = 'metrics-token-for-the-bus-interest-test';

describe.skipIf(!url)('what a node reads of other nodes’ commits', () => {
  let nodes: RedisNodes | undefined;
  beforeAll(async () => {
    nodes = await twoNodesOnRedis(url!, {
      env: { METRICS_PORT: '0', METRICS_TOKEN: TOKEN, LEASE_MIN_TTL_SECONDS: '1' },
      homes: true, // as in production: only a board's home decides, and only it asks for the board's commits
    });
  });
  afterAll(() => nodes?.stop());

  const batchesOnB = async () => {
    const m = await scrape(nodes!.b.server.metricsPort!, TOKEN);
    return {
      read: m.value('board_bus_batches_total', { fate: 'read' }),
      skipped: m.value('board_bus_batches_total', { fate: 'skipped' }),
    };
  };

  it('receives nothing of a board nobody on the node watches, though it holds sockets, and reads a watched one', async () => {
    const { a, b } = nodes!;
    const unwatched = await newBoard(a.url);
    const watched = await newBoard(a.url);
    const agent = await unwatched.agent('idle');
    const watcher = await watched.agent('watcher');
    const idle = await openSocket(b.url, { authorization: agent.defaults.authorization! });
    const watching = await openSocket(b.url, { authorization: watcher.defaults.authorization! });
    watching.send({ type: 'subscribe', boardId: watched.projectId, topics: ['activity'] });
    await watching.next((m) => m.type === 'subscribed');

    const before = await batchesOnB();
    for (const title of ['one', 'two', 'three']) expect((await agent.post('/api/items', { title })).status).toBe(201);
    expect((await watcher.post('/api/items', { title: 'seen on b' })).status).toBe(201);
    // a publishes in commit order and Redis keeps it: had b been sent the three, they would be in before this.
    expect(await watching.next((m) => m.type === 'event')).toMatchObject({
      boardId: watched.projectId,
      event: { type: 'item.created' },
    });
    expect(await batchesOnB()).toEqual({ read: before.read + 1, skipped: before.skipped });
    idle.ws.close();
    watching.ws.close();
  });

  it('tells a holder’s socket on a node that reads nothing of the board that its lease ended', async () => {
    const { a, b } = nodes!;
    const board = await newBoard(a.url);
    const holder = await board.agent('holder');
    expect((await holder.post('/api/items', { title: 'short lease' })).status).toBe(201);
    const socket = await openSocket(b.url, { authorization: holder.defaults.authorization! });
    const before = await batchesOnB();
    const grant = await holder.post('/api/claim', { ttlSeconds: 1 });
    expect(grant.status).toBe(200);
    const expired = await socket.next((m) => m.type === 'event' && m.event.type === 'lease.expired', 20_000);
    expect(expired).toMatchObject({
      boardId: board.projectId,
      event: { workId: grant.body.workId, data: { lease: { holder: holder.principal } } },
    });
    expect(expired.seq).toBeGreaterThan(0);
    // The end came as a notice: b received none of the board's batches.
    expect(await batchesOnB()).toEqual(before);
    socket.ws.close();
  });
});
