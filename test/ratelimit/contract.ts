// The rate-limiter contract, run against memory and Redis.
import { describe, expect, it } from 'vitest';
import type { RateLimiter, WindowClock } from '../../src/ratelimit/limiter.js';
import { unique } from '../support/temp.js';

export function limiterContract(name: string, make: (clock?: WindowClock) => RateLimiter | Promise<RateLimiter>): void {
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

    it('draws several budgets at once: consumes the first ones in order until one is denied, and only reports the rest', async () => {
      const limiter = await make();
      const request = { key: unique('req'), limit: 3, windowMs: 60_000 };
      const write = { key: unique('write'), limit: 1, windowMs: 60_000 };
      const drawn = async (consumed: number) =>
        (await limiter.draw([request, write], consumed, t0 + 1)).map((d) => [d.remaining, d.allowed]);
      expect(await drawn(0)).toEqual([
        [3, true],
        [1, true],
      ]); // reported only
      expect(await drawn(2)).toEqual([
        [2, true],
        [0, true],
      ]); // both consumed
      expect(await drawn(1)).toEqual([
        [1, true],
        [0, false],
      ]); // the request consumed, the write reported: none left
      expect(await drawn(2)).toEqual([
        [0, true],
        [0, false],
      ]); // the write denied, after the request was consumed
      expect(await drawn(2)).toEqual([
        [0, false],
        [0, false],
      ]); // the request denied: the write is not touched
      expect(await limiter.peek(request, t0 + 2)).toMatchObject({ remaining: 0 });
      // A denied first budget leaves the second uncounted.
      const roomy = { key: unique('roomy'), limit: 5, windowMs: 60_000 };
      expect((await limiter.draw([request, roomy], 2, t0 + 3)).map((d) => d.allowed)).toEqual([false, true]);
      expect(await limiter.peek(roomy, t0 + 3)).toMatchObject({ remaining: 5 });
      expect((await limiter.draw([roomy], 1, t0 + 60_000))[0]).toMatchObject({
        allowed: true,
        remaining: 4,
        resetAt: (t0 + 120_000) / 1000,
      });
    });

    it('gives back a use in its window, never below zero', async () => {
      const limiter = await make();
      const spec = { key: unique('refund'), limit: 2, windowMs: 60_000 };
      await limiter.refund(spec, t0); // nothing taken: nothing to give back
      await limiter.consume(spec, t0);
      await limiter.consume(spec, t0 + 1);
      expect((await limiter.consume(spec, t0 + 2)).allowed).toBe(false);
      await limiter.refund(spec, t0 + 3);
      expect(await limiter.peek(spec, t0 + 4)).toMatchObject({ remaining: 1 });
      await limiter.refund(spec, t0 + 5);
      await limiter.refund(spec, t0 + 6);
      expect(await limiter.peek(spec, t0 + 7)).toMatchObject({ remaining: 2 });
      expect((await limiter.consume(spec, t0 + 8)).remaining).toBe(1);
    });

    it('counts its windows at its own clock when given one, whatever time the callers say', async () => {
      let held = Date.now();
      const limiter = await make(() => held);
      const spec = { key: unique('held'), limit: 2, windowMs: 60_000 };
      const later = held + 3_600_000; // a caller an hour ahead: the same window all the same
      expect((await limiter.consume(spec, later)).remaining).toBe(1);
      expect((await limiter.draw([spec], 1, later + 60_000))[0]).toMatchObject({ allowed: true, remaining: 0 });
      expect(await limiter.consume(spec, later + 120_000)).toMatchObject({ allowed: false, remaining: 0 });
      expect(await limiter.peek(spec, 0)).toMatchObject({
        remaining: 0,
        resetAt: Math.ceil((held - (held % 60_000) + 60_000) / 1000),
      });
      held += 60_000; // the clock moves a window on: a fresh budget
      expect(await limiter.consume(spec, later)).toMatchObject({ allowed: true, remaining: 1 });
    });

    it('grants exactly the limit under concurrent consumption', async () => {
      const limiter = await make();
      const spec = { key: unique('c'), limit: 25, windowMs: 60_000 };
      const results = await Promise.all(Array.from({ length: 60 }, () => limiter.consume(spec, t0 + 5)));
      expect(results.filter((r) => r.allowed)).toHaveLength(25);
    });
  });
}
