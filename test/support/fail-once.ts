// Fault injection on a real store: one call of a collection method fails as an unreachable store
// would, and the calls after it go through.
import { StoreUnavailableError } from '../../store/ports/store.js';

/** The next call of `target[method]` throws StoreUnavailableError; later calls reach the original. */
export function failOnce<T extends object, K extends keyof T>(target: T, method: K): void {
  const original = target[method];
  target[method] = (async () => {
    target[method] = original;
    throw new StoreUnavailableError(new Error('failed once, on purpose'));
  }) as T[K];
}
