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

export class RedisRateLimiter implements RateLimiter {
  /** `clock`: the time to count windows at instead of the callers' `now` (tests only; a window's key still expires at its end by that clock). */
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'rl:',
    private readonly clock?: WindowClock,
  ) {}

  async consume(spec: WindowSpec, now: number): Promise<Drawn> {
    return (await this.draw([spec], 1, now))[0]!;
  }

  async draw(specs: readonly WindowSpec[], consumed: number, now: number): Promise<Drawn[]> {
    const windows = specs.map((spec) => this.window(spec, now));
    const args: (string | number)[] = [consumed];
    specs.forEach((spec, i) => args.push(spec.limit, windows[i]!.end + 1000));
    const out = (await this.redis.eval(DRAW, specs.length, ...windows.map((w) => w.key), ...args)) as number[];
    return specs.map((spec, i) => ({ ...budget(spec, out[2 * i]!, windows[i]!.end), allowed: out[2 * i + 1] === 1 }));
  }

  async peek(spec: WindowSpec, now: number): Promise<Budget> {
    const { key, end } = this.window(spec, now);
    return budget(spec, Number((await this.redis.get(key)) ?? 0), end);
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
