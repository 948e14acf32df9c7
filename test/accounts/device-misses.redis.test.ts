// The device flow's budget of wrong user codes (10 an hour per account), under concurrent guesses:
// the miss is taken before the lookup, so no more than the budget are ever looked up, whichever
// limiter counts (this node's memory, or Redis shared by the nodes).
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DEVICE_MISSES_PER_HOUR, DeviceFlow } from '../../src/accounts/device-flow.js';
import type { SessionIdentity } from '../../src/auth/identity.js';
import type { RateLimiter } from '../../src/ratelimit/limiter.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const url = inject('redisUrl');
const redis = url ? new Redis(url) : null;
afterAll(async () => {
  await redis?.quit();
});

const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
/** The i-th of many distinct well-formed user codes, none of them issued. */
const wrongCode = (i: number) => Array.from({ length: 8 }, (_, k) => ALPHABET[(i * 7 + k * 3) % 20]).join('');
const person = (): SessionIdentity => {
  const accountId = unique('acc');
  return { kind: 'session', principal: `user:${accountId}`, accountId, sessionId: 's' };
};

const limiters: [string, () => RateLimiter][] = [['memory', () => new MemoryRateLimiter()]];
if (redis) limiters.push(['redis', () => new RedisRateLimiter(redis, `${unique('misses')}:`)]);

describe.each(limiters)('device user-code misses, %s limiter', (_, makeLimiter) => {
  const used = useStore();
  const flowOf = (limiter: RateLimiter) =>
    new DeviceFlow(used.store, {} as never, {} as never, 'http://board.test', (c) => `d:${c}`, limiter, 90);

  it('looks up no more than the budget of 60 concurrent wrong codes', async () => {
    const flow = flowOf(makeLimiter());
    const who = person();
    const now = Date.now();
    const results = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => flow.lookup(who, wrongCode(i), now)));
    const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'found'));
    expect(codes.filter((c) => c === 'DEVICE_CODE_NOT_FOUND')).toHaveLength(DEVICE_MISSES_PER_HOUR);
    expect(codes.filter((c) => c === 'RATE_LIMITED')).toHaveLength(60 - DEVICE_MISSES_PER_HOUR);
  });

  it('counts no miss for a code found, even many at once', async () => {
    const flow = flowOf(makeLimiter());
    const who = person();
    const now = Date.now();
    const started = await flow.start({ clientName: 'bot' }, now);
    for (let round = 0; round < 3; round++) {
      const found = await Promise.all(Array.from({ length: 8 }, () => flow.lookup(who, started.userCode, now)));
      expect(found.every((f) => f.clientName === 'bot')).toBe(true);
    }
    const misses = await Promise.allSettled(
      Array.from({ length: DEVICE_MISSES_PER_HOUR }, (_, i) => flow.lookup(who, wrongCode(i), now)),
    );
    expect(misses.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'found'))).toEqual(
      Array(DEVICE_MISSES_PER_HOUR).fill('DEVICE_CODE_NOT_FOUND'),
    );
    await expect(flow.lookup(who, started.userCode, now)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  });
});
