// The per-address budgets and the operators' allowlist (src/admin/allowlist.ts): a limiter is
// given the list's answer, so every request of the `address` and `poll` classes asks it, from
// memory, before counting (applyRateBudget).
import type { Exemption, RateLimiter } from './limiter.js';

/** The limiter, answering the per-address budgets' exemptions from `exemption`. */
export function withExemption(limiter: RateLimiter, exemption: Exemption): RateLimiter {
  return {
    consume: (spec, now) => limiter.consume(spec, now),
    peek: (spec, now) => limiter.peek(spec, now),
    refund: (spec, now) => limiter.refund(spec, now),
    draw: (specs, consumed, now) => limiter.draw(specs, consumed, now),
    exempt: (address, email) => exemption.exempt(address, email),
  };
}
