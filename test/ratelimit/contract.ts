// The rate-limiter contract, run against memory and Redis.
import { describe, expect, it } from 'vitest';
import type { RateLimiter } from '../../src/ratelimit/limiter.js';
import { unique } from '../support/temp.js';

export function limiterContract(name: string, make: () => RateLimiter | Promise<RateLimiter>): void {
  describe(`rate limiter contract: ${name}`, () => {
    const t0 = 1_800_000_000_000; // a window boundary for 60 s windows

    it('allows up to the limit in a window, denies after without counting, and resets with the next window', async () => {
      const limiter = await make();
      const spec = { key: unique('k'), limit: 3, windowMs: 60_000 };
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await limiter.consume(spec, t0 + i));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, false]);
      expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0, 0]);
      expect(results[0]!.resetAt).toBe((t0 + 60_000) / 1000);
      expect(await limiter.peek(spec, t0 + 10)).toEqual({ limit: 3, remaining: 0, resetAt: (t0 + 60_000) / 1000 });
      const next = await limiter.consume(spec, t0 + 60_000);
      expect(next).toMatchObject({ allowed: true, remaining: 2, resetAt: (t0 + 120_000) / 1000 });
    });

    it('keeps keys apart and peeks without counting', async () => {
      const limiter = await make();
      const a = { key: unique('a'), limit: 2, windowMs: 60_000 };
      const b = { key: unique('b'), limit: 2, windowMs: 60_000 };
      await limiter.consume(a, t0);
      expect(await limiter.peek(b, t0)).toMatchObject({ remaining: 2 });
      expect(await limiter.peek(a, t0)).toMatchObject({ remaining: 1 });
      expect(await limiter.peek(a, t0)).toMatchObject({ remaining: 1 });
    });

    it('grants exactly the limit under concurrent consumption', async () => {
      const limiter = await make();
      const spec = { key: unique('c'), limit: 25, windowMs: 60_000 };
      const results = await Promise.all(Array.from({ length: 60 }, () => limiter.consume(spec, t0 + 5)));
      expect(results.filter((r) => r.allowed)).toHaveLength(25);
    });
  });
}
