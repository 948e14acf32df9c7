// Redis goes away in the middle of work and comes back: REST keeps working, readiness says the
// bus is degraded, and a socket on the other node ends up with every event, once and in order,
// even when nothing new is committed after Redis is back; a token revoked meanwhile loses its
// socket on the node that did not hear of it.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RedisBus } from '../../src/bus/redis.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { newBoard } from '../support/board.js';
import { openSocket } from '../support/socket.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';
import { tempDir } from '../support/temp.js';
import { canRunRedis, ownRedis, type OwnRedis } from '../support/redis-server.js';
import { until } from '../support/until.js';
import { busHearsOthers } from '../support/bus-ready.js';

const haveRedis = inject('redisUrl') !== null && canRunRedis;

describe.skipIf(!haveRedis)('a Redis outage', () => {
  let redis: OwnRedis;
  let a: TestServer;
  let b: TestServer;
  let remove: () => Promise<void>;
  const busOf = async (node: TestServer) => (await new Client(node.url).get('/readyz')).body.bus;

  beforeAll(async () => {
    redis = await ownRedis();
    const dir = await tempDir();
    remove = dir.remove;
    const store = await openEmbeddedStore(dir.path);
    const buses = [new RedisBus(redis.url), new RedisBus(redis.url)] as const;
    a = await startTestServer({}, store, buses[0]);
    b = await startTestServer({}, store, buses[1]);
    await until(async () => (await busOf(a)) === 'ok' && (await busOf(b)) === 'ok');
    await Promise.all(buses.map((bus) => busHearsOthers(bus, redis.url)));
  });
  afterAll(async () => {
    redis.kill();
    await a.stop();
    await b.stop();
    await remove();
  });

  it('loses no event for subscribers across the outage', async () => {
    const board = await newBoard(a.url);
    const agent = await board.agent('a');
    const onB = await openSocket(b.url, { authorization: agent.defaults.authorization! });
    onB.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
    await onB.next((m) => m.type === 'subscribed');
    await agent.post('/api/items', { title: 'before' });
    expect((await onB.next((m) => m.type === 'event')).seq).toBe(1);

    const doomed = await board.owner.post('/api/accounts/tokens', {
      name: 'doomed',
      scope: 'workspace',
      projectId: board.projectId,
    });
    const doomedOnB = await openSocket(b.url, { authorization: `Bearer ${doomed.body.secret}` });

    redis.kill();
    await until(async () => (await busOf(a)) === 'degraded');
    for (let i = 0; i < 5; i++) expect((await agent.post('/api/items', { title: `during ${i}` })).status).toBe(201);
    // Revoked on A while B cannot hear it: B checks its sockets' credentials once the bus is back.
    expect((await board.owner.request('DELETE', `/api/accounts/tokens/${doomed.body.token.id}`)).status).toBe(204);

    await redis.start();
    // Nothing new is committed: B reads what it missed from the log once its bus is back.
    const seqs: number[] = [];
    while (seqs.length < 5) seqs.push((await onB.next((m) => m.type === 'event', 20_000)).seq);
    expect(seqs).toEqual([2, 3, 4, 5, 6]);
    await until(async () => (await busOf(a)) === 'ok' && (await busOf(b)) === 'ok');
    // Well before the periodic check (a minute) would find it.
    const closedSoon = await Promise.race([
      doomedOnB.closed,
      new Promise((r) => setTimeout(() => r('still open after 20 s'), 20_000)),
    ]);
    expect(closedSoon).toEqual({ code: 4001, reason: 'the credential was revoked' });
    await agent.post('/api/items', { title: 'after' });
    expect((await onB.next((m) => m.type === 'event')).seq).toBe(7);

    const resumed = await openSocket(b.url, { authorization: agent.defaults.authorization! });
    resumed.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'], since: 1 });
    const replayed: number[] = [];
    while (replayed.length < 6) replayed.push((await resumed.next((m) => m.type === 'event')).seq);
    expect(replayed).toEqual([2, 3, 4, 5, 6, 7]);
    onB.ws.close();
    resumed.ws.close();
  }, 120_000);
});
