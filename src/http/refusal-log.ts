// Spent budgets' refusals in the request log: the first of a caller's on a route is logged as any
// request is, those that follow it within the quiet period are counted and logged as one line at
// its end. A flood past its budget is tens of thousands of 429s a second: one line each filled the
// disk and cost the node more than the refusals themselves, and said nothing the first did not.

import type { Logger } from '../log.js';

/** How long after a caller's logged refusal on a route its next ones are only counted. */
export const REFUSAL_QUIET_MS = 10_000;
/** Callers and routes counted at once; past it a refusal is logged as any request (nothing is lost). */
const COUNTED_MOST = 10_000;

interface Quiet {
  /** Who was refused (a principal, or an address for a request without a credential) and on which route. */
  who: string;
  route: string | null;
  /** Refusals since the logged one, not logged yet. */
  count: number;
  /** When the logged one was. */
  since: number;
}

export class RefusalLog {
  private readonly quiet = new Map<string, Quiet>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly logger: Pick<Logger, 'info'>,
    private readonly clock: () => number,
    quietMs = REFUSAL_QUIET_MS,
  ) {
    this.timer = setInterval(() => this.flush(), quietMs);
    this.timer.unref();
  }

  /**
   * Whether this 429 of `who` on `route` is logged as a request line: the first is, and opens a
   * quiet period in which the next are only counted.
   */
  logs(who: string, route: string | null): boolean {
    const key = `${route ?? ''} ${who}`;
    const quiet = this.quiet.get(key);
    if (quiet) {
      quiet.count++;
      return false;
    }
    if (this.quiet.size >= COUNTED_MOST) return true;
    this.quiet.set(key, { who, route, count: 0, since: this.clock() });
    return true;
  }

  /** One line per caller and route refused since its logged refusal; those with none left start afresh. */
  flush(): void {
    const until = new Date(this.clock()).toISOString();
    for (const [key, q] of this.quiet) {
      this.quiet.delete(key);
      if (q.count === 0) continue;
      this.logger.info(
        { refused: q.who, route: q.route, status: 429, count: q.count, since: new Date(q.since).toISOString(), until },
        'requests refused',
      );
    }
  }

  /** Logs what is counted and stops the timer (the node is shutting down). */
  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
