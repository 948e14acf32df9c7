// A sole writer's store refuses every call once its lease no longer holds (writer-lease.ts).
import { StoreUnavailableError } from '../ports/store.js';
import type { WriterLease } from './writer-lease.js';

/**
 * A collection of the store whose calls are refused (StoreUnavailableError) once `lease` no longer
 * holds. The node is stopped then anyway, but by a timer, which a process paused past its term (a
 * frozen VM, a stopped container) runs only after the I/O that woke it: a request decided then finds
 * the store refusing, rather than writing beside the node that took the lease. Every method of a
 * collection returns a promise; `close` is left alone, so a stopping node still waits for its calls.
 */
export function guarded<C extends object>(collection: C, lease: WriterLease): C {
  const calls = new Map<PropertyKey, unknown>();
  return new Proxy(collection, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      let call = calls.get(key);
      if (!call) {
        const method = value as (...args: unknown[]) => unknown;
        call =
          key === 'close'
            ? (...args: unknown[]) => method.apply(target, args)
            : (...args: unknown[]) =>
                lease.holds() ? method.apply(target, args) : Promise.reject(new StoreUnavailableError(LAPSED));
        calls.set(key, call);
      }
      return call;
    },
  });
}
const LAPSED = new Error('this node no longer holds the sole-writer lease');
