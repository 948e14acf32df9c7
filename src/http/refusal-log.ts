// Spent budgets' refusals in the request log: the first of a caller's on a route is logged as any
// request is, those that follow it are counted and logged as one line when the period ends (every
// REFUSAL_QUIET_MS, for every caller at once: a count is at most that old when written). A flood
// past its budget is tens of thousands of 429s a second: one line each filled the disk and cost the
// node more than the refusals themselves, and said nothing the first did not.

import type { Logger } from '../log.js';

/** How often the counts are written: a caller's refusals on a route after its logged one are counted until then. */
export const REFUSAL_QUIET_MS = 10_000;
/** Callers and routes counted at once; past it the refusals of the others are counted together, on one line. */
const COUNTED_MOST = 10_000;
/** What the line counting the others' refusals names as refused. */
export const OTHERS = 'others';

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
  /** The refusals of callers past COUNTED_MOST, counted together: a flood from many logs no more than one from few. */
  private others: Quiet | null = null;
  private readonly timer: NodeJS.Timeout;
  /** Closed (the node shuts down): nothing would write a count, so every refusal is logged. */
  private closed = false;

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
    if (this.closed) return true;
    const key = `${route ?? ''} ${who}`;
    const quiet = this.quiet.get(key);
    if (quiet) {
      quiet.count++;
      return false;
    }
    if (this.quiet.size >= COUNTED_MOST) {
      (this.others ??= { who: OTHERS, route: null, count: 0, since: this.clock() }).count++;
      return false;
    }
    this.quiet.set(key, { who, route, count: 0, since: this.clock() });
    return true;
  }

  /** One line per caller and route refused since its logged refusal; those with none left start afresh. */
  flush(): void {
    const until = new Date(this.clock()).toISOString();
    const counted = [...this.quiet.values(), ...(this.others ? [this.others] : [])];
    this.quiet.clear();
    this.others = null;
    for (const q of counted) {
      if (q.count === 0) continue;
      this.logger.info(
        { refused: q.who, route: q.route, status: 429, count: q.count, since: new Date(q.since).toISOString(), until },
        'requests refused',
      );
    }
  }

  /** Logs what is counted and stops the timer (the node is shutting down). */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.flush();
  }
}
