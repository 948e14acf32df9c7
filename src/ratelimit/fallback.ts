// Shared budgets that survive their store going away: while Redis cannot answer, this node counts
// on its own (REST keeps working; budgets are per node until Redis is back), and says so once
// when it falls back and once when it returns.
import type { Budget, Drawn, RateLimiter, WindowSpec } from './limiter.js';
import type { Maybe } from '../../store/ports/maybe.js';

export type BudgetScope = 'shared' | 'node';

export class FallbackRateLimiter implements RateLimiter {
  private scope: BudgetScope = 'shared';

  constructor(
    private readonly shared: RateLimiter,
    private readonly local: RateLimiter,
    private readonly onScope: (scope: BudgetScope, cause?: unknown) => void = () => undefined,
  ) {}

  consume(spec: WindowSpec, now: number): Promise<Drawn> {
    return this.either((l) => l.consume(spec, now));
  }

  peek(spec: WindowSpec, now: number): Promise<Budget> {
    return this.either((l) => l.peek(spec, now));
  }

  refund(spec: WindowSpec, now: number): Promise<void> {
    return this.either((l) => l.refund(spec, now));
  }

  draw(specs: readonly WindowSpec[], consumed: number, now: number): Promise<Drawn[]> {
    return this.either((l) => l.draw(specs, consumed, now));
  }

  private async either<T>(use: (limiter: RateLimiter) => Maybe<T>): Promise<T> {
    try {
      const result = await use(this.shared);
      this.become('shared');
      return result;
    } catch (e) {
      this.become('node', e);
      return use(this.local);
    }
  }

  private become(scope: BudgetScope, cause?: unknown): void {
    if (scope === this.scope) return;
    this.scope = scope;
    this.onScope(scope, cause);
  }
}
