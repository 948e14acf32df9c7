// Fixed-window budgets in Redis, so every node draws on the same counters. One script per
// call: a denied request never increments, and a window's key expires with the window.
import type { Redis } from 'ioredis';
import { windowStart, type Budget, type RateLimiter, type WindowSpec } from './limiter.js';

const CONSUME = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used < tonumber(ARGV[1]) then
  used = redis.call('INCR', KEYS[1])
  if used == 1 then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
  return {used, 1}
end
return {used, 0}
`;

export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'rl:',
  ) {}

  async consume(spec: WindowSpec, now: number): Promise<Budget & { allowed: boolean }> {
    const { key, end } = this.window(spec, now);
    const [used, allowed] = (await this.redis.eval(CONSUME, 1, key, spec.limit, end + 1000)) as [number, number];
    return { ...budget(spec, used, end), allowed: allowed === 1 };
  }

  async peek(spec: WindowSpec, now: number): Promise<Budget> {
    const { key, end } = this.window(spec, now);
    return budget(spec, Number((await this.redis.get(key)) ?? 0), end);
  }

  private window(spec: WindowSpec, now: number): { key: string; end: number } {
    const start = windowStart(now, spec.windowMs);
    return { key: `${this.prefix}${spec.key}:${start}`, end: start + spec.windowMs };
  }
}

const budget = (spec: WindowSpec, used: number, end: number): Budget => ({ limit: spec.limit, remaining: Math.max(0, spec.limit - used), resetAt: Math.ceil(end / 1000) });
