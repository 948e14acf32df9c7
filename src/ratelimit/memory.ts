// Fixed-window counters in this process; stale windows are swept as they are touched.
import {
  windowStart,
  type Budget,
  type Drawn,
  type RateLimiter,
  type WindowClock,
  type WindowSpec,
} from './limiter.js';

interface Window {
  start: number;
  end: number;
  used: number;
}

const SWEEP_EVERY_MS = 10_000;

export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, Window>();
  private sweptAt = 0;

  /** `clock`: the time to count windows at instead of the callers' `now` (tests only). */
  constructor(private readonly clock?: WindowClock) {}

  async consume(spec: WindowSpec, now: number): Promise<Drawn> {
    return (await this.draw([spec], 1, now))[0]!;
  }

  async peek(spec: WindowSpec, now: number): Promise<Budget> {
    return this.budget(spec, this.window(spec, this.clock?.() ?? now));
  }

  async refund(spec: WindowSpec, now: number): Promise<void> {
    const w = this.window(spec, this.clock?.() ?? now);
    if (w.used > 0) w.used -= 1;
  }

  /** Answered now: the counters are here. */
  draw(specs: readonly WindowSpec[], consumed: number, callerNow: number): Drawn[] {
    const now = this.clock?.() ?? callerNow;
    let consuming = consumed;
    const drawn: Drawn[] = [];
    for (let i = 0; i < specs.length; i++) {
      const spec = specs[i]!;
      const w = this.window(spec, now);
      const allowed = w.used < spec.limit;
      if (i < consuming && allowed) w.used += 1;
      else if (i < consuming) consuming = i; // denied: the rest are only reported
      // A literal, not { ...budget, allowed }: V8 spreads into an object with more properties slowly (about 0.4 µs).
      drawn.push({
        limit: spec.limit,
        remaining: Math.max(0, spec.limit - w.used),
        resetAt: Math.ceil(w.end / 1000),
        allowed,
      });
    }
    return drawn;
  }

  private window(spec: WindowSpec, now: number): Window {
    this.sweep(now);
    const start = windowStart(now, spec.windowMs);
    let w = this.windows.get(spec.key);
    if (!w || w.start !== start) {
      w = { start, end: start + spec.windowMs, used: 0 };
      this.windows.set(spec.key, w);
    }
    return w;
  }

  private budget(spec: WindowSpec, w: Window): Budget {
    return { limit: spec.limit, remaining: Math.max(0, spec.limit - w.used), resetAt: Math.ceil(w.end / 1000) };
  }

  private sweep(now: number): void {
    if (now - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    for (const [key, w] of this.windows) if (w.end <= now) this.windows.delete(key);
  }
}
