// Fault injection on a real store: one call of a collection method fails as an unreachable store
// would (before it reaches the store, or after the store carried it out: an answer lost), and the
// calls after it go through; or one call runs another step just before or after it (a race, driven).
import { StoreUnavailableError } from '../../store/ports/store.js';

/** The next call of `target[method]` throws StoreUnavailableError; later calls reach the original. */
export function failOnce<T extends object, K extends keyof T>(target: T, method: K): void {
  const original = target[method];
  target[method] = (async () => {
    target[method] = original;
    throw new StoreUnavailableError(new Error('failed once, on purpose'));
  }) as T[K];
}

/** The next call of `target[method]` reaches the store, then throws StoreUnavailableError as if its answer were lost. */
export function loseAnswerOnce<T extends object, K extends keyof T>(target: T, method: K): void {
  const original = target[method] as (...args: unknown[]) => Promise<unknown>;
  target[method] = (async (...args: unknown[]) => {
    target[method] = original as T[K];
    await original.apply(target, args);
    throw new StoreUnavailableError(new Error('carried out, its answer lost, on purpose'));
  }) as T[K];
}

/**
 * The next call of `target[method]` runs `step` first (`when: 'before'`) or once the store carried
 * the call out (`'after'`), then answers as the original did: a race driven to one interleaving.
 */
export function interposeOnce<T extends object, K extends keyof T>(
  target: T,
  method: K,
  when: 'before' | 'after',
  step: () => Promise<unknown>,
): void {
  const original = target[method] as (...args: unknown[]) => Promise<unknown>;
  target[method] = (async (...args: unknown[]) => {
    target[method] = original as T[K];
    if (when === 'before') await step();
    const answer = await original.apply(target, args);
    if (when === 'after') await step();
    return answer;
  }) as T[K];
}
