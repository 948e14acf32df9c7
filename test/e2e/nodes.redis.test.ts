// Two nodes on one store and one Redis, with board homes: each node's sockets see the other's
// commits, and a claim race across nodes (one of them forwarding to the other) has one winner.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { largestEntryBytes } from '../../src/cluster/wire.js';
import { BODY_LIMIT_BYTES } from '../../src/config.js';
import { Client, type TestServer } from '../support/server.js';
import { newBoard } from '../support/board.js';
import { twoNodesOnRedis, type RedisNodes } from '../support/redis-nodes.js';
import { openSocket } from '../support/socket.js';
import { until } from '../support/until.js';

const url = inject('redisUrl');

describe.skipIf(!url)('two nodes with the Redis bus', () => {
  let nodes: RedisNodes | undefined;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    nodes = await twoNodesOnRedis(url!, { homes: true });
    ({ a, b } = nodes);
  });
  afterAll(() => nodes?.stop());

  it('reports the bus ok, and pushes a commit on one node to sockets on the other', async () => {
    expect((await new Client(b.url).get('/readyz')).body).toMatchObject({ bus: 'ok' });
    const board = await newBoard(a.url);
    const agentOnA = await board.agent('a');
    const socketOnB = await openSocket(b.url, { authorization: agentOnA.defaults.authorization! });
    socketOnB.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
    await socketOnB.next((m) => m.type === 'subscribed');
    await agentOnA.post('/api/items', { title: 'made on A' });
    expect(await socketOnB.next((m) => m.type === 'event')).toMatchObject({ seq: 1, event: { type: 'item.created' } });
    await agentOnA.post('/api/claim', {});
    expect(await socketOnB.next((m) => m.type === 'event')).toMatchObject({ seq: 2, event: { type: 'lease.granted' } });
    socketOnB.ws.close();
  });

  it('gives a claim race across both nodes exactly one winner, round after round', async () => {
    const board = await newBoard(a.url);
    const agents = await Promise.all(Array.from({ length: 10 }, (_, i) => board.agent(`racer-${i}`)));
    const rounds = 20;
    await agents[0]!.post('/api/items/batch', {
      items: Array.from({ length: rounds }, (_, i) => ({ title: `contested ${i}` })),
    });
    for (let round = 1; round <= rounds; round++) {
      const results = await Promise.all(
        agents.map((agent, i) =>
          new Client(i % 2 ? a.url : b.url, agent.defaults).post('/api/claim', { workId: `W-${round}` }),
        ),
      );
      expect(
        results.filter((r) => r.status === 200),
        `round ${round}`,
      ).toHaveLength(1);
      expect(results.filter((r) => r.status === 409)).toHaveLength(agents.length - 1);
    }
    const log = await new Client(a.url, agents[0]!.defaults).get('/api/activity?limit=200');
    const granted = log.body.events.filter((e: { type: string }) => e.type === 'lease.granted');
    expect(new Set(granted.map((e: { workId: string }) => e.workId)).size).toBe(rounds);
    expect(granted).toHaveLength(rounds);
  });

  it('learns observedResolution across nodes: a failure on one node, the success after it on the other', async () => {
    for (let i = 0; i < 3; i++) {
      const board = await newBoard(a.url);
      const agent = await board.agent(`learner-${i}`);
      const crossed = new Promise<void>((resolve) => {
        const off = nodes!.buses[1].onNotice((n) => {
          if (n.kind !== 'resolution.failed' || n.workspace !== `board:${board.projectId}`) return;
          off();
          resolve();
        });
      });
      expect((await new Client(a.url, agent.defaults).get('/api/items/W-404')).status).toBe(404);
      await crossed; // the failure's note has reached the other node
      expect((await new Client(b.url, agent.defaults).get('/api/status')).status).toBe(200);
    }
    for (const node of [a, b]) {
      await until(async () => {
        const listed = (await new Client(node.url).get('/api/errors')).body.errors.find(
          (e: { code: string }) => e.code === 'ITEM_NOT_FOUND',
        );
        return listed.observedResolution.status === 'observed';
      });
      const listed = (await new Client(node.url).get('/api/errors')).body.errors.find(
        (e: { code: string }) => e.code === 'ITEM_NOT_FOUND',
      );
      expect(listed.observedResolution).toMatchObject({
        status: 'observed',
        distinctWorkspaces: 3,
        observations: 3,
        path: 'GET /api/status',
      });
    }
  });
});

describe.skipIf(!url)('two nodes with a larger BODY_LIMIT_BYTES', () => {
  let nodes: RedisNodes | undefined;
  beforeAll(async () => {
    nodes = await twoNodesOnRedis(url!, { homes: true, env: { BODY_LIMIT_BYTES: String(4 * 1024 * 1024) } });
  });
  afterAll(() => nodes?.stop());

  // The peers' frames are bounded by what the node's body limit lets a command be (src/cluster/wire.ts):
  // a node bounding them by the default limit would never forward a batch its own limit admits.
  it('forwards a batch past the default limit to the board’s home, and the home answers it', async () => {
    const { a, b } = nodes!;
    const board = await newBoard(a.url);
    const agent = await board.agent('bulk');
    expect((await agent.post('/api/items', { title: 'made on A: A is the home' })).status).toBe(201);
    const items = Array.from({ length: 500 }, (_, i) => ({ title: `bulk ${i}`, description: 'd'.repeat(4000) }));
    const sent = await new Client(b.url, agent.defaults).post('/api/items/batch', { items });
    expect(sent.status, sent.text.slice(0, 300)).toBe(201);
    // More than a channel bounded by the default body limit carries in one entry.
    expect(Buffer.byteLength(JSON.stringify({ items }))).toBeGreaterThan(largestEntryBytes(BODY_LIMIT_BYTES));
    expect((await agent.get('/api/status')).body.counts).toMatchObject({ ready: 501 });
  });
});
