// Identities cached per credential on each node (src/auth/identity-cache.ts), two nodes on one
// store and one Redis of the test's own: a credential is read from the store once, not per
// request; a revocation or a reissue made on one node is refused on the other, and an expiry change followed,
// well before an entry's own age would (MAX_AGE_MS), so only the bus's notice can have done it;
// expiry is checked on each use; and while the bus is down every request reads the store, and
// what was cached before the outage is not trusted after it.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MAX_AGE_MS } from '../../src/auth/identity-cache.js';
import { sha256 } from '../../src/auth/authenticator.js';
import { newBoard, type TestBoard } from '../support/board.js';
import { twoNodesOnRedis, type RedisNodes } from '../support/redis-nodes.js';
import { canRunRedis, ownRedis, type OwnRedis } from '../support/redis-server.js';
import { Client } from '../support/server.js';
import { until } from '../support/until.js';

const url = inject('redisUrl');
/** Well under an entry's own age: a change seen within it was told, not aged out. */
const TOLD_WITHIN_MS = Math.min(3000, MAX_AGE_MS / 3);

describe.skipIf(!url || !canRunRedis)('identities cached per credential, across two nodes', () => {
  let redis: OwnRedis;
  let nodes: RedisNodes;
  let board: TestBoard;
  /** How many times each node's store was asked for a token by the hash of its secret. */
  const lookups = new Map<string, number>();

  beforeAll(async () => {
    redis = await ownRedis();
    nodes = await twoNodesOnRedis(redis.url);
    const tokens = nodes.store.tokens;
    const findOne = tokens.findOne.bind(tokens);
    tokens.findOne = (filter) => {
      if (typeof filter.secretHash === 'string')
        lookups.set(filter.secretHash, (lookups.get(filter.secretHash) ?? 0) + 1);
      return findOne(filter);
    };
    board = await newBoard(nodes.a.url);
  }, 60_000);
  afterAll(async () => {
    await nodes?.stop();
    redis?.kill();
  });

  /** A workspace token made on node a, and clients for it on both nodes. */
  async function agent(name: string, body: Record<string, unknown> = {}) {
    const res = await board.owner.post('/api/accounts/tokens', {
      name,
      scope: 'workspace',
      projectId: board.projectId,
      role: 'member',
      ...body,
    });
    expect(res.status, res.text).toBe(201);
    const secret = res.body.secret as string;
    const authorization = { authorization: `Bearer ${secret}` };
    return {
      id: res.body.token.id as string,
      hash: sha256(secret),
      onA: new Client(nodes.a.url, authorization),
      onB: new Client(nodes.b.url, authorization),
    };
  }

  /** First uses on both nodes, and the lastUsedAt write they cause (told like any other write) settled. */
  async function warm(t: { onA: Client; onB: Client }) {
    for (const client of [t.onB, t.onA]) expect((await client.get('/api/status')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    for (const client of [t.onB, t.onA]) expect((await client.get('/api/status')).status).toBe(200);
  }

  it('reads a token from the store once per node, not once per request', async () => {
    const steady = await agent('steady');
    await warm(steady);
    const before = lookups.get(steady.hash)!;
    for (let i = 0; i < 20; i++) {
      expect((await steady.onB.get('/api/status')).status).toBe(200);
      expect((await steady.onA.get('/api/status')).status).toBe(200);
    }
    expect(lookups.get(steady.hash)).toBe(before);
  });

  it('refuses on the other node at once a token revoked or reissued on one node, and follows an expiry changed there', async () => {
    const revoked = await agent('revoked');
    const expiring = await agent('expiring');
    const reissued = await agent('reissued');
    for (const t of [revoked, expiring, reissued]) expect((await t.onB.get('/api/status')).status).toBe(200); // cached on b

    const told = Date.now();
    expect((await board.owner.request('DELETE', `/api/accounts/tokens/${revoked.id}`)).status).toBe(204);
    const patched = await board.owner.request('PATCH', `/api/accounts/tokens/${expiring.id}`, {
      json: { expiresAt: new Date(Date.now() + 2000).toISOString() },
    });
    expect(patched.status, patched.text).toBe(200);
    expect((await board.owner.post(`/api/accounts/tokens/${reissued.id}/reissue`)).status).toBe(200);
    nodes.b.advance(2050); // b's clock past the new expiry, rather than waiting for it
    await until(async () => (await revoked.onB.get('/api/status')).status === 401, TOLD_WITHIN_MS);
    expect((await revoked.onB.get('/api/status')).body.error.code).toBe('INVALID_SERVICE_TOKEN');
    await until(async () => (await reissued.onB.get('/api/status')).status === 401, TOLD_WITHIN_MS);
    // b held the token with no expiry; only the notice can have told it of the new one.
    await until(
      async () => (await expiring.onB.get('/api/status')).body?.error?.code === 'EXPIRED_TOKEN',
      TOLD_WITHIN_MS,
    );
    expect(Date.now() - told).toBeLessThan(MAX_AGE_MS);
  });

  it('checks a cached token’s expiry on every use', async () => {
    const expiresAt = nodes.b.now() + 2000;
    const soon = await agent('soon', { expiresAt: new Date(expiresAt).toISOString() });
    await warm(soon);
    const before = lookups.get(soon.hash);
    nodes.b.advance(expiresAt + 50 - nodes.b.now()); // b's clock past the expiry, rather than waiting for it
    const res = await soon.onB.get('/api/status');
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('EXPIRED_TOKEN');
    expect(lookups.get(soon.hash)).toBe(before); // refused from what the cache held
  });

  it('reads the store on every request while the bus is down, and trusts nothing cached before the outage once it is back', async () => {
    const during = await agent('revoked during the outage');
    const kept = await agent('revoked while cached, before the outage');
    for (const t of [during, kept]) expect((await t.onB.get('/api/status')).status).toBe(200);
    redis.kill();
    await until(async () => (await new Client(nodes.b.url).get('/readyz')).body.bus === 'degraded', 20_000);
    await until(async () => (await new Client(nodes.a.url).get('/readyz')).body.bus === 'degraded', 20_000);
    const before = lookups.get(during.hash)!;
    for (let i = 0; i < 3; i++) expect((await during.onB.get('/api/status')).status).toBe(200);
    expect(lookups.get(during.hash)).toBe(before + 3); // each one read the store

    // Revoked on a while nothing can tell b: b reads the store, so it refuses at once all the same.
    expect((await board.owner.request('DELETE', `/api/accounts/tokens/${during.id}`)).status).toBe(204);
    expect((await during.onB.get('/api/status')).status).toBe(401);
    expect((await board.owner.request('DELETE', `/api/accounts/tokens/${kept.id}`)).status).toBe(204);

    await redis.start();
    await until(async () => (await new Client(nodes.b.url).get('/readyz')).body.bus === 'ok', 30_000);
    // b cached `kept` before the outage and was never told of its revocation: it is not trusted.
    expect((await kept.onB.get('/api/status')).status).toBe(401);
    expect((await during.onB.get('/api/status')).status).toBe(401);
  });
});
