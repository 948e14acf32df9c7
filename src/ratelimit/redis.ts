// Fixed-window budgets in Redis, so every node draws on the same counters. One script per
// call, a request's budgets together: a denied request never increments, and a window's key
// expires with the window.
import type { Redis } from 'ioredis';
import {
  windowStart,
  type Budget,
  type Drawn,
  type RateLimiter,
  type WindowClock,
  type WindowSpec,
} from './limiter.js';

/** KEYS: the budgets' windows; ARGV: how many to consume, then each one's limit and expiry. */
const DRAW = `
local consuming = tonumber(ARGV[1])
local out = {}
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i])
  local used = tonumber(redis.call('GET', key) or '0')
  local allowed = 0
  if used < limit then allowed = 1 end
  if i <= consuming then
    if allowed == 1 then
      used = redis.call('INCR', key)
      if used == 1 then redis.call('PEXPIREAT', key, ARGV[2 * i + 1]) end
    else
      consuming = i - 1
    end
  end
  out[#out + 1] = used
  out[#out + 1] = allowed
end
return out
`;

/** KEYS: one budget's window; gives back one use, never below zero (an expired window stays gone). */
const REFUND = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used > 0 then return redis.call('DECR', KEYS[1]) end
return 0
`;

/** The client with DRAW and REFUND defined on it: sent by their SHA1 (EVALSHA), their text only when Redis lacks it. */
type Drawing = Redis & {
  drawBudgets(keys: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
  refundBudget(keys: number, key: string): Promise<number>;
};

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Drawing;

  /** `clock`: the time to count windows at instead of the callers' `now` (tests only; a window's key still expires at its end by that clock). */
  constructor(
    redis: Redis,
    private readonly prefix = 'rl:',
    private readonly clock?: WindowClock,
  ) {
    // A request's draw is the node's commonest Redis call: by EVAL it sent DRAW's 500 bytes each
    // time and Redis hashed them each time; by its SHA1 it is 40.
    redis.defineCommand('drawBudgets', { lua: DRAW });
    redis.defineCommand('refundBudget', { lua: REFUND });
    this.redis = redis as Drawing;
  }

  async consume(spec: WindowSpec, now: number): Promise<Drawn> {
    return (await this.draw([spec], 1, now))[0]!;
  }

  async draw(specs: readonly WindowSpec[], consumed: number, now: number): Promise<Drawn[]> {
    const windows = specs.map((spec) => this.window(spec, now));
    const args: (string | number)[] = [consumed];
    specs.forEach((spec, i) => args.push(spec.limit, windows[i]!.end + 1000));
    const out = await this.redis.drawBudgets(specs.length, ...windows.map((w) => w.key), ...args);
    return specs.map((spec, i) => ({ ...budget(spec, out[2 * i]!, windows[i]!.end), allowed: out[2 * i + 1] === 1 }));
  }

  async peek(spec: WindowSpec, now: number): Promise<Budget> {
    const { key, end } = this.window(spec, now);
    return budget(spec, Number((await this.redis.get(key)) ?? 0), end);
  }

  async refund(spec: WindowSpec, now: number): Promise<void> {
    await this.redis.refundBudget(1, this.window(spec, now).key);
  }

  private window(spec: WindowSpec, callerNow: number): { key: string; end: number } {
    const start = windowStart(this.clock?.() ?? callerNow, spec.windowMs);
    return { key: `${this.prefix}${spec.key}:${start}`, end: start + spec.windowMs };
  }
}

const budget = (spec: WindowSpec, used: number, end: number): Budget => ({
  limit: spec.limit,
  remaining: Math.max(0, spec.limit - used),
  resetAt: Math.ceil(end / 1000),
});
