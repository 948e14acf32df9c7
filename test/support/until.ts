// The tests' waits: `until` for a condition a busy machine decides the timing of, and `quietFor`
// for the one kind of wait that has no event to await: proving that something does not happen.

export interface UntilOptions {
  /** How long to wait before failing, in ms (default 20 s: a busy two-core machine is slow, a hang is not). */
  timeout?: number;
  /** The longest pause between checks, in ms (default 50): the first come sooner (5, 10, 20 ms...), for conditions that hold at once. */
  interval?: number;
  /** What is awaited, for the failure's message (default: the check's source). */
  what?: string | (() => string);
}

/**
 * Resolves once `check` holds; rejects after the timeout saying what was awaited, or at once with
 * what `check` throws. A number for `options` is the timeout.
 */
export async function until(
  check: () => Promise<boolean> | boolean,
  options: number | UntilOptions = {},
): Promise<void> {
  const { timeout = 20_000, interval = 50, what } = typeof options === 'number' ? { timeout: options } : options;
  const end = Date.now() + timeout;
  for (let pause = Math.min(5, interval); ; pause = Math.min(pause * 2, interval)) {
    if (await check()) return;
    if (Date.now() >= end) {
      const awaited = typeof what === 'function' ? what() : (what ?? String(check).replace(/\s+/g, ' ').slice(0, 200));
      throw new Error(`not reached within ${timeout} ms: ${awaited}`);
    }
    await tick(pause);
  }
}

/**
 * Gives something that must NOT happen (a late frame, a second delivery, a reply to a held call)
 * `ms` to show itself. An absence has no event to await, so this is the one fixed wait a test may
 * use; say at the call what it proves. Keep it short: it is spent in full on every run.
 */
export function quietFor(ms: number): Promise<void> {
  return tick(ms);
}

/**
 * A simulated client's own pace (an agent that works a while, or backs off as Retry-After asks):
 * part of the load a test makes, not a wait for a result.
 */
export function pace(ms: number): Promise<void> {
  return tick(ms);
}

const tick = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
