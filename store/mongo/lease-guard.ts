// A sole writer's store refuses every call once its lease no longer holds (writer-lease.ts), and
// every write to the server as it is sent.
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

/** What a driver's collection writes with (the only calls a node that lost the lease must not send). */
const WRITES = new Set<PropertyKey>([
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'replaceOne',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
  'bulkWrite',
]);

/**
 * A driver's collection whose writes are refused once `lease` no longer holds, checked as each is
 * sent. `guarded` checks when a store call begins; a board's commit reads (the header, to catch
 * up) and stages parts before its header update, and a process paused past its term between the
 * two would otherwise send the update beside the node that took the lease.
 */
export function writesGuarded<D extends object>(driver: D, lease: WriterLease): D {
  const writes = new Map<PropertyKey, unknown>();
  return new Proxy(driver, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function' || !WRITES.has(key)) return value;
      let write = writes.get(key);
      if (!write) {
        const method = value as (...args: unknown[]) => unknown;
        write = (...args: unknown[]) =>
          lease.holds() ? method.apply(target, args) : Promise.reject(new StoreUnavailableError(LAPSED));
        writes.set(key, write);
      }
      return write;
    },
  });
}

const LAPSED = new Error('this node no longer holds the sole-writer lease');
