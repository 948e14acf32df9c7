// What a node keeps for the operators' watching routes (src/routes/admin-watch.ts): the usage
// counters and their flushes, this node's figures told to the others through the bus, the store's
// commits as timed here, and the last retention purge. Built once per node by src/server.ts.
import type { Logger } from 'pino';
import type { Identity } from '../auth/identity.js';
import type { Purged } from '../board/retention.js';
import type { RequestContext } from '../request-context.js';
import type { Store } from '../../store/ports/store.js';
import { CommitStats, timedCommits, type PurgeReport } from './durability.js';
import { dayOf, UsageRecorder, type OpenSockets, type UsageSocket } from './usage.js';
import { FIGURES_EVERY_MS, Utilization, type NodeFigures, type NodeSources } from './utilization.js';

/**
 * How often counted usage is written to the store. Every node writes each row it touched, so this
 * cost grows with the nodes. A flush now costs one store command a row (the usage port's `add`: an
 * upsert on MongoDB; on FerretDB an update, and an insert besides for a row it creates). It cost
 * two to four a row (a read, then an insert or a version-checked update, again on contention), and
 * at 5 s that was over a third of the store's commands under a busy fleet on two nodes (32
 * agents); 15 s is kept, not measured again since. An operator's read flushes its own node first;
 * another node's counts reach the store within this.
 */
export const USAGE_FLUSH_MS = 15_000;
/** Usage rows (days and buckets) are kept this long; the cost model reads 30 days. */
export const USAGE_KEEP_DAYS = 400;
/** Abuse buckets are kept this long: the ranking reads the last hour. */
const BUCKETS_KEEP_DAYS = 2;
const USAGE_PURGE_MS = 3_600_000;

export interface WatchParts {
  nodeId: string;
  store: Store;
  sources: NodeSources;
  /** Tells every node (the bus). */
  publish(figures: NodeFigures): void;
  logger: Logger;
  clock: () => number;
}

export class Watch {
  readonly commits: CommitStats;
  readonly usage: UsageRecorder;
  readonly utilization: Utilization;
  /** The store with board commits timed: the node uses it in place of the one it was given. */
  readonly store: Store;
  private purge: PurgeReport | null = null;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly parts: WatchParts) {
    this.commits = new CommitStats(parts.clock);
    this.store = timedCommits(parts.store, this.commits);
    this.usage = new UsageRecorder(parts.store, parts.clock);
    this.utilization = new Utilization(parts.nodeId, parts.clock(), parts.sources, parts.clock);
  }

  start(): void {
    const every = (ms: number, run: () => void) => {
      const t = setInterval(run, ms);
      t.unref();
      this.timers.push(t);
    };
    every(
      USAGE_FLUSH_MS,
      () =>
        void this.usage
          .flush()
          .catch((e: unknown) =>
            this.parts.logger.warn({ err: e }, 'usage counters: flush failed; kept for the next one'),
          ),
    );
    this.tell();
    every(FIGURES_EVERY_MS, () => this.tell());
    every(
      USAGE_PURGE_MS,
      () =>
        void this.purgeUsage().catch((e: unknown) =>
          this.parts.logger.warn({ err: e }, 'usage counters: purge failed; retried next hour'),
        ),
    );
  }

  record = (ctx: RequestContext, status: number): void => {
    this.usage.record(ctx, status);
    this.utilization.requests.add(ctx.now);
  };

  committed(boardId: string, events: number): void {
    this.usage.committed(boardId, events);
    this.utilization.commits.add(this.parts.clock());
  }

  /** The sockets open on this node, whose time is counted (src/server/sockets.ts: the hub). */
  countSockets(open: OpenSockets): void {
    this.usage.countSockets(open);
  }

  socketClosed(conn: UsageSocket): void {
    this.usage.socketClosed(conn);
  }

  overBudget(identity: Identity): void {
    this.usage.overBudget(identity);
  }

  /** The retention purge's outcome on this node (src/board/retention.ts schedulePurges). */
  purged(purged: Purged | null, error?: unknown): void {
    this.purge = {
      at: this.parts.clock(),
      purged,
      error: error ? (error instanceof Error ? error.name : 'Error') : null,
    };
  }

  get lastPurge(): PurgeReport | null {
    return this.purge;
  }

  /** Deletes day rows past USAGE_KEEP_DAYS and abuse buckets past two days, through the (day, scope) index. */
  async purgeUsage(): Promise<number> {
    const now = this.parts.clock();
    let deleted = await this.parts.store.usage.deleteMany({ day: { $lt: dayOf(now - USAGE_KEEP_DAYS * 86_400_000) } });
    // A day's buckets (YYYY-MM-DDTHH:MM) sort after the day's row and before the next day's: one range per day.
    for (let d = BUCKETS_KEEP_DAYS; d < BUCKETS_KEEP_DAYS + 7; d++) {
      const day = dayOf(now - d * 86_400_000);
      deleted += await this.parts.store.usage.deleteMany({ day: { $gt: day, $lt: `${day}U` } });
    }
    return deleted;
  }

  /** Stops the timers and writes what was counted (bounded: a store that does not answer is not waited for long). */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.utilization.stop();
    await Promise.race([this.usage.flush().catch(() => undefined), new Promise((r) => setTimeout(r, 2000).unref())]);
  }

  private tell(): void {
    this.parts.publish(this.utilization.sample(true));
  }
}
