// The rate-budget port: fixed windows counted per key. Memory now; Redis holds them across nodes.

export interface Budget {
  limit: number;
  remaining: number;
  /** Unix epoch seconds when the window resets. */
  resetAt: number;
}

export interface WindowSpec {
  key: string;
  limit: number;
  windowMs: number;
}

export interface RateLimiter {
  /** Counts one use when the budget allows it; reports the budget either way. */
  consume(spec: WindowSpec, now: number): Promise<Budget & { allowed: boolean }>;
  /** Reports the budget without counting. */
  peek(spec: WindowSpec, now: number): Promise<Budget>;
}

export const windowStart = (now: number, windowMs: number): number => now - (now % windowMs);
