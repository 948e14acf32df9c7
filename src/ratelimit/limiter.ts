// The rate-budget port: fixed windows counted per key. Memory now; Redis holds them across nodes.
import type { Maybe } from '../../store/ports/maybe.js';

export interface Budget {
  limit: number;
  remaining: number;
  /** Unix epoch seconds when the window resets. */
  resetAt: number;
}

export type Drawn = Budget & { allowed: boolean };

export interface WindowSpec {
  key: string;
  limit: number;
  windowMs: number;
}

export interface RateLimiter {
  /** Counts one use when the budget allows it; reports the budget either way. */
  consume(spec: WindowSpec, now: number): Promise<Drawn>;
  /** Reports the budget without counting. */
  peek(spec: WindowSpec, now: number): Promise<Budget>;
  /**
   * Gives back one use consumed at `now` (the same window): a use taken up front, so that
   * concurrent callers cannot all pass a check, that turned out not to count. Never below zero.
   */
  refund(spec: WindowSpec, now: number): Promise<void>;
  /**
   * Several budgets at once (one round trip where the counters are remote): the first `consumed`
   * are consumed in order until one is denied, and the rest (those after a denial included) only
   * reported, `allowed` then saying whether one more would be.
   */
  draw(specs: readonly WindowSpec[], consumed: number, now: number): Maybe<Drawn[]>;
  /** Who the per-address budgets spare (withExemption, src/ratelimit/exempt.ts); absent, no one. */
  exempt?: Exemption['exempt'];
}

/** The operators' allowlist as the per-address budgets see it (src/admin/allowlist.ts); answered from memory. */
export interface Exemption {
  /**
   * 'address': the client address is listed, and draws on no per-address budget. 'domain': the
   * email (of a sign-up or sign-in) is of a listed domain, and draws on a budget of its own
   * instead of the address's. null: neither.
   */
  exempt(address: string, email?: string): 'address' | 'domain' | null;
}

export const windowStart = (now: number, windowMs: number): number => now - (now % windowMs);

/**
 * The time a limiter counts its windows at, when it is given one: then it, not the caller's `now`,
 * says which window a use falls in. Tests hold one still, so that no window turns over while a
 * test spends a budget; a node gives none, and the caller's `now` counts.
 */
export type WindowClock = () => number;
