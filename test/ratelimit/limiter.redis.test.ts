import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { RedisRateLimiter } from '../../src/ratelimit/redis.js';
import { unique } from '../support/temp.js';
import { limiterContract } from './contract.js';

const url = inject('redisUrl');
const clients: Redis[] = [];
afterAll(async () => {
  for (const c of clients) await c.quit();
});

describe.skipIf(!url)('redis limiter', () => {
  const connect = () => {
    const c = new Redis(url!, { lazyConnect: false, maxRetriesPerRequest: 1 });
    clients.push(c);
    return c;
  };
  limiterContract('redis', (clock) => new RedisRateLimiter(connect(), `${unique('test')}:`, clock));

  it('shares one budget between two nodes (two connections)', async () => {
    const prefix = `${unique('shared')}:`;
    const nodeA = new RedisRateLimiter(connect(), prefix);
    const nodeB = new RedisRateLimiter(connect(), prefix);
    const spec = { key: 'principal', limit: 10, windowMs: 60_000 };
    const now = Date.now();
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? nodeA : nodeB).consume(spec, now)));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    expect(await nodeA.peek(spec, now)).toMatchObject({ remaining: 0 });
  });

  it('sends its draws by the script’s SHA1, not its text', async () => {
    const redis = connect();
    const limiter = new RedisRateLimiter(redis, `${unique('sha')}:`);
    const id = await redis.client('ID');
    const spec = { key: 'k', limit: 100, windowMs: 60_000 };
    // The first draw may find the script missing (EVALSHA, NOSCRIPT, then EVAL); the next is by its SHA1 alone.
    for (let i = 0; i < 2; i++) expect((await limiter.consume(spec, Date.now())).allowed).toBe(true);
    const listed = (await connect().client('LIST', 'ID', id)) as string;
    expect(/ cmd=(\S+)/.exec(listed)?.[1]).toBe('evalsha');
  });

  it('lets the window key expire with the window', async () => {
    const redis = connect();
    const prefix = `${unique('ttl')}:`;
    const limiter = new RedisRateLimiter(redis, prefix);
    const now = Date.now();
    await limiter.consume({ key: 'k', limit: 5, windowMs: 60_000 }, now);
    const keys = await redis.keys(`${prefix}*`);
    expect(keys).toHaveLength(1);
    const ttl = await redis.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(61_000);
  });
});
