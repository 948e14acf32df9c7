// A value at hand now, or a promise of it. What a request reads is most often in this node's
// memory (a cached credential, a budget counted here, the board held here, a version in the
// embedded store's own file): a step that answers from memory answers now, and a request whose every
// step did runs to its response without a promise or a turn of the microtask queue. Here, the
// lowest layer, so store ports, actors and the server all speak it.
//
// A function that returns a Maybe may throw instead of answering now; once it has returned a
// promise, it rejects instead.

export type Maybe<T> = T | Promise<T>;

/**
 * `next` of the value: now if it is at hand, else once it comes. (Not named `then`: a module
 * exporting `then` is a thenable, and `await import()` of it would call it.)
 */
export function andThen<T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** Both values: now if both are at hand. */
export function both<A, B>(a: Maybe<A>, b: Maybe<B>): Maybe<[A, B]> {
  return a instanceof Promise || b instanceof Promise ? Promise.all([a, b]) : [a, b];
}

/** What `step` gives, or `fallback` when it throws or rejects: now when the step answered now. */
export function orElse<T, F>(step: () => Maybe<T>, fallback: F): Maybe<T | F> {
  try {
    const value = step();
    return value instanceof Promise ? value.catch(() => fallback) : value;
  } catch {
    return fallback;
  }
}

/**
 * Resolves after whatever this turn of the event loop does and the callbacks it defers to its end
 * (the HTTP layer writes the replies it held there): work that must not delay an answer waits on it.
 */
export function afterThisTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/**
 * Runs steps written as a generator that yields each Maybe it needs (`const x = (yield step()) as X`)
 * and gets its value back: synchronously while each value is at hand, as a promise from the first
 * that is not. A rejection is thrown into the generator where it yielded, as `await` would.
 */
export function run<T>(steps: Generator<unknown, T, unknown>): Maybe<T> {
  let step = steps.next();
  while (!step.done) {
    if (step.value instanceof Promise) return finish(steps, step.value);
    step = steps.next(step.value);
  }
  return step.value;
}

async function finish<T>(steps: Generator<unknown, T, unknown>, waiting: Promise<unknown>): Promise<T> {
  let pending: unknown = waiting;
  for (;;) {
    let outcome: { value: unknown } | { error: unknown };
    try {
      outcome = { value: pending instanceof Promise ? await pending : pending };
    } catch (error) {
      outcome = { error };
    }
    // What the generator throws itself rejects the promise.
    const step = 'error' in outcome ? steps.throw(outcome.error) : steps.next(outcome.value);
    if (step.done) return step.value;
    pending = step.value;
  }
}
