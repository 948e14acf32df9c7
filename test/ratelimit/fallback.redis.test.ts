// Budgets when Redis goes away and comes back: requests keep being counted (on this node), the
// limit still holds, and the limiter says once that it fell back and once that it returned.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { FallbackRateLimiter, type BudgetScope } from '../../src/ratelimit/fallback.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis.js';
import { canRunRedis, ownRedis, type OwnRedis } from '../support/redis-server.js';
import { until } from '../support/until.js';

describe.skipIf(inject('redisUrl') === null || !canRunRedis)('rate budgets across a Redis outage', () => {
  let redis: OwnRedis;
  let client: Redis;
  afterAll(() => {
    client?.disconnect();
    redis?.kill();
  });

  it('counts on the node while Redis is down and shares again once it is back', async () => {
    redis = await ownRedis();
    client = new Redis(redis.url, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      commandTimeout: 1000,
      retryStrategy: () => 50,
    });
    client.on('error', () => undefined);
    await until(() => client.status === 'ready');
    const scopes: BudgetScope[] = [];
    const limiter = new FallbackRateLimiter(new RedisRateLimiter(client, 'fb:'), new MemoryRateLimiter(), (scope) =>
      scopes.push(scope),
    );
    const spec = { key: 'agent', limit: 3, windowMs: 60_000 };
    const now = Date.now();

    expect(await limiter.consume(spec, now)).toMatchObject({ allowed: true, remaining: 2 });
    expect(await client.keys('fb:*')).toHaveLength(1);

    redis.kill();
    await until(() => client.status !== 'ready');
    const during = [];
    for (let i = 0; i < 4; i++) during.push(await limiter.consume(spec, now));
    expect(during.map((b) => b.allowed)).toEqual([true, true, true, false]);
    expect(scopes).toEqual(['node']);

    await redis.start();
    await until(() => client.status === 'ready');
    // A fresh Redis holds no counters: the shared window starts over.
    expect(await limiter.consume(spec, now)).toMatchObject({ allowed: true, remaining: 2 });
    expect(scopes).toEqual(['node', 'shared']);
  }, 60_000);
});
