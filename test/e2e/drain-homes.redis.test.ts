// A draining node gives its boards' homes up as it begins to drain, not once the requests in flight
// there have finished: a command for its board through another node is decided there while the
// drain still waits. (Before, the draining home kept renewing its leases and answered forwarded
// commands `retry`, so they went round until their deadline and answered 503 BOARD_BUSY.) And a
// request in flight on it as it began is still decided, there when nobody has taken the board.
// Two nodes on one embedded store, homes and buses in a real Redis; the request that holds the
// drain open is a POST whose body never ends (or ends after the drain began).
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import type { Store } from '../../store/ports/store.js';
import { newBoard } from '../support/board.js';
import { twoNodesOnRedis, type RedisNodes } from '../support/redis-nodes.js';
import { Client } from '../support/server.js';
import { tempDir, type TempDir } from '../support/temp.js';
import { until } from '../support/until.js';

const url = inject('redisUrl');

describe.skipIf(!url)('a draining home', () => {
  let dir: TempDir;
  let store: Store;
  let nodes: RedisNodes;
  let keys: Redis;
  beforeAll(async () => {
    dir = await tempDir();
    store = await openEmbeddedStore(dir.path);
    // Each node closes its store as it stops; the other goes on with it, so the test closes it.
    const shared: Store = { ...store, close: async () => undefined };
    nodes = await twoNodesOnRedis(url!, { homes: true, store: shared, env: { SHUTDOWN_GRACE_MS: '60000' } });
    keys = new Redis(url!);
  });
  afterAll(async () => {
    keys?.disconnect();
    await nodes?.stop();
    await store?.close();
    await dir?.remove();
  });

  it('gives its boards up as the drain begins: a command through the other node is decided there while a request still holds it', async () => {
    const { a, b, nodeIds } = nodes;
    const board = await newBoard(a.url);
    const agent = await board.agent('through-a-drain');
    expect((await agent.post('/api/items', { title: 'on a' })).status).toBe(201);
    const boardId = board.projectId;
    expect(await keys.get(`home:${boardId}`)).toMatch(new RegExp(`^${nodeIds[0]} `)); // a is the board's home
    // A request in flight on a: its head and part of its body, the rest never sent.
    const held = connect(Number(new URL(a.url).port), '127.0.0.1');
    await new Promise<void>((resolve) => held.once('connect', resolve));
    held.write(
      `POST /api/items HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${Object.entries(agent.defaults)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}Content-Length: 100\r\n\r\n{"title":`,
    );
    await until(() => a.server.inFlight() > 0, { what: 'the held request in flight on a' });
    let stopped = false;
    const stopping = a.stop().then(() => (stopped = true));
    const res = await new Client(b.url, agent.defaults).post('/api/items', { title: 'during the drain' });
    expect(res.status, res.text).toBe(201);
    expect(stopped).toBe(false); // a still waits for the held request
    expect(await keys.get(`home:${boardId}`)).toMatch(new RegExp(`^${nodeIds[1]} `)); // b took the board
    held.destroy();
    await stopping;
    const titles = (await new Client(b.url, agent.defaults).get(`/api/items?projectId=${boardId}`)).body.items.map(
      (i: { title: string }) => i.title,
    );
    expect(titles).toEqual(expect.arrayContaining(['on a', 'during the drain']));
  });

  it('decides a request that was in flight on it as the drain began, for a board nobody has taken yet', async () => {
    const { b: home, nodeIds } = nodes; // a drained in the test before: b drains here
    const board = await newBoard(home.url);
    const agent = await board.agent('in-flight');
    expect((await agent.post('/api/items', { title: 'on b' })).status).toBe(201);
    expect(await keys.get(`home:${board.projectId}`)).toMatch(new RegExp(`^${nodeIds[1]} `));
    // Its head and the start of its body before the drain, the rest after.
    const body = JSON.stringify({ title: 'in flight' });
    const held = connect(Number(new URL(home.url).port), '127.0.0.1');
    await new Promise<void>((resolve) => held.once('connect', resolve));
    let answer = '';
    held.on('data', (data: Buffer) => (answer += data.toString()));
    held.write(
      `POST /api/items HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n${Object.entries(
        agent.defaults,
      )
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}Content-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await until(() => home.server.inFlight() > 0, { what: 'the request in flight on b' });
    const stopping = home.stop();
    await until(async () => (await keys.get(`home:${board.projectId}`)) === null, { what: 'b giving its home up' });
    held.write(body.slice(5));
    await until(() => answer.includes('\r\n\r\n'), { what: 'its answer' });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 201 Created');
    await stopping;
    held.destroy();
  });
});
