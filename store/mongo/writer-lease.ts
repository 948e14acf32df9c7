// Who may write a MongoDB store. A node without REDIS_URL keeps each board in memory as the store's
// sole writer, so a second such node on one database would answer from a copy the first makes
// stale. That node holds a sole-writer lease, one document (`_id: 'sole'`) in the `writers`
// collection; nodes with REDIS_URL, which share a store by design, each keep a heartbeat there
// (`_id: 'shared:<tenure>'`). No node starts beside a live sole writer, and no sole writer beside a
// live shared node.
//
// Liveness is read from a document changing, never from clocks: its holder counts `beat` up every
// fifth of a term, and a document nobody changed for a whole term, watched on this node's monotonic clock,
// belongs to a node that is gone. A sole writer stops (onLost) once it has not renewed for a term
// less a margin, counted from when its last renewal that landed was sent: before any watcher can
// have found its lease silent for a term.
import { randomUUID } from 'node:crypto';
import type { Collection } from 'mongodb';
import { isDuplicateKey } from './duplicate-key.js';

/** How long a lease lives unrenewed: a node started after its holder died waits at most about this long. */
export const LEASE_TERM_MS = 15_000;
/** A holder renews five times a term, so a store unreachable for most of a term costs it nothing. */
const RENEWS_PER_TERM = 5;
/** A sole writer stops this much before a watcher may find its lease silent (timers fire late). */
const STOP_MARGIN_MS = 1_000;
/** Heartbeats unrenewed this long (by the renewer's clock) are cleared by any shared node at start. */
const STALE_HEARTBEAT_MS = 24 * 3600_000;
const SOLE = 'sole';

export interface WriterDoc {
  _id: string;
  kind: 'sole' | 'shared';
  /** The holder's NODE_ID (or <hostname>-<pid>). */
  node: string;
  /** One per start: a node restarted under the same name holds a new one, so the old process's renewals fail. */
  tenure: string;
  beat: number;
  /** The holder's clock at its last renewal, for people reading the document (and clearing day-old heartbeats). */
  renewedAt: Date;
}

export interface WriterOptions {
  /** `sole`: the store's one writer (no REDIS_URL); `shared`: one of several nodes (REDIS_URL). */
  mode: 'sole' | 'shared';
  node: string;
  /** Called once when this node must stop writing at once: its lease was taken over or, sole, not renewed within the term. */
  onLost(message: string): void;
  /** A renewal failed (the store unreachable), the first of a run of them: the lease holds until its term runs out. */
  onRenewalFailed?(cause: unknown): void;
  /** This node took over a lease, or cleared heartbeats, that nobody renewed for a term. */
  onTookOver?(message: string): void;
  /** Tests shorten it. */
  termMs?: number;
}

export interface WriterLease {
  /**
   * Whether this node may still write: false once the lease was lost, or a term less the margin
   * passed since the last renewal that landed was sent, even before the timer that says so fires.
   */
  holds(): boolean;
  /** Stops renewing and deletes this node's document, so the next node starts at once. */
  release(): Promise<void>;
}

/** Another node writes the store in a way this node cannot start beside. */
export class StoreInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreInUseError';
  }
}

/**
 * Takes this node's place among the store's writers before it serves: the sole-writer lease, or a
 * shared node's heartbeat. Refuses (StoreInUseError) when a live node of the other kind, or another
 * sole writer, holds the store; a document unrenewed for a term is its dead holder's, and is taken.
 */
export async function holdWriterLease(
  writers: Collection<WriterDoc>,
  dbName: string,
  options: WriterOptions,
): Promise<WriterLease> {
  const termMs = options.termMs ?? LEASE_TERM_MS;
  const mine = (id: string): WriterDoc => ({
    _id: id,
    kind: options.mode,
    node: options.node,
    tenure: randomUUID(),
    beat: 0,
    renewedAt: new Date(),
  });
  if (options.mode === 'sole') {
    const doc = mine(SOLE);
    const sentAt = await takeSole(writers, dbName, doc, termMs, options);
    const lease = new Renewal(writers, doc, dbName, termMs, options);
    lease.start(sentAt);
    await refuseShared(writers, dbName, termMs, options).catch(async (e: unknown) => {
      await lease.release();
      throw e;
    });
    return lease;
  }
  // One heartbeat per process, not per name: a node started under a name still in use (a rolling
  // update) leaves the other's alone.
  const tenure = randomUUID();
  const doc = { ...mine(`shared:${tenure}`), tenure };
  const sentAt = performance.now();
  await writers.insertOne({ ...doc });
  const heartbeat = new Renewal(writers, doc, dbName, termMs, options);
  heartbeat.start(sentAt);
  try {
    await writers.deleteMany({ kind: 'shared', renewedAt: { $lt: new Date(Date.now() - STALE_HEARTBEAT_MS) } });
    await refuseSole(writers, dbName, termMs, options);
  } catch (e) {
    await heartbeat.release();
    throw e;
  }
  return heartbeat;
}

/** Inserts the sole-writer lease, or takes it from a holder silent for a term; resolves with when the write that took it was sent. */
async function takeSole(
  writers: Collection<WriterDoc>,
  dbName: string,
  doc: WriterDoc,
  termMs: number,
  options: WriterOptions,
): Promise<number> {
  for (;;) {
    const sentAt = performance.now();
    try {
      await writers.insertOne({ ...doc });
      return sentAt;
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
    }
    const held = await writers.findOne({ _id: SOLE });
    if (!held) continue; // released meanwhile
    const alive = await firstAlive(writers, [held], termMs);
    if (alive) throw new StoreInUseError(soleInUse(dbName, alive.node, 'sole'));
    const { _id, ...fields } = doc;
    const takenAt = performance.now();
    const taken = await writers.replaceOne({ _id, tenure: held.tenure, beat: held.beat }, fields);
    if (taken.matchedCount === 1) {
      options.onTookOver?.(
        `took the sole-writer lease of MongoDB database ${dbName} from node ${held.node}, unrenewed for ${termMs / 1000} s`,
      );
      return takenAt;
    }
  }
}

/** A sole writer, its lease taken, starts only when no node with REDIS_URL is alive on the store. */
async function refuseShared(
  writers: Collection<WriterDoc>,
  dbName: string,
  termMs: number,
  options: WriterOptions,
): Promise<void> {
  const shared = await writers.find({ kind: 'shared' }).toArray();
  if (!shared.length) return;
  const alive = await firstAlive(writers, shared, termMs);
  if (alive) throw new StoreInUseError(sharedInUse(dbName, alive.node));
  for (const seen of shared) {
    const cleared = await writers.deleteOne({ _id: seen._id, tenure: seen.tenure, beat: seen.beat });
    const now = cleared.deletedCount ? null : await writers.findOne({ _id: seen._id });
    if (now) throw new StoreInUseError(sharedInUse(dbName, now.node)); // renewed at the last moment
  }
  options.onTookOver?.(
    `cleared the heartbeats of nodes ${shared.map((d) => d.node).join(', ')} (REDIS_URL) in MongoDB database ` +
      `${dbName}, unrenewed for ${termMs / 1000} s`,
  );
}

/** A node with REDIS_URL, its heartbeat written, starts only when no sole writer is alive on the store. */
async function refuseSole(
  writers: Collection<WriterDoc>,
  dbName: string,
  termMs: number,
  options: WriterOptions,
): Promise<void> {
  for (;;) {
    const held = await writers.findOne({ _id: SOLE });
    if (!held) return;
    const alive = await firstAlive(writers, [held], termMs);
    if (alive) throw new StoreInUseError(soleInUse(dbName, alive.node, 'shared'));
    const cleared = await writers.deleteOne({ _id: SOLE, tenure: held.tenure, beat: held.beat });
    if (cleared.deletedCount) {
      options.onTookOver?.(
        `cleared the sole-writer lease of node ${held.node} in MongoDB database ${dbName}, unrenewed for ${termMs / 1000} s`,
      );
      return;
    }
  }
}

/**
 * Watches documents for a term: resolves with the first that changed (its holder is alive, or
 * another node took it), or null when none did (or those that did not were deleted). The term is
 * counted from after the first read, which is after the renewal it saw was sent.
 */
async function firstAlive(
  writers: Collection<WriterDoc>,
  seen: readonly WriterDoc[],
  termMs: number,
): Promise<WriterDoc | null> {
  const end = performance.now() + termMs;
  const pollMs = Math.min(500, termMs / 10);
  let watching = seen;
  while (watching.length && performance.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    const now = await writers.find({ _id: { $in: watching.map((d) => d._id) } }).toArray();
    const changed = now.find((d) =>
      watching.some((w) => w._id === d._id && (w.tenure !== d.tenure || w.beat !== d.beat)),
    );
    if (changed) return changed;
    watching = watching.filter((w) => now.some((d) => d._id === w._id));
  }
  return null;
}

const soleInUse = (dbName: string, holder: string, mode: 'sole' | 'shared') =>
  `MongoDB database ${dbName} is in use by node ${holder}, its sole writer (started without REDIS_URL). ` +
  (mode === 'sole'
    ? `To run several nodes on one store, set REDIS_URL on every node; else stop ${holder} first.`
    : `This node has REDIS_URL: set REDIS_URL on ${holder} too and restart it, or stop it first.`);

const sharedInUse = (dbName: string, holder: string) =>
  `MongoDB database ${dbName} is in use by node ${holder}, started with REDIS_URL (nodes that share the store). ` +
  `This node has no REDIS_URL, so it would write as the sole writer: set REDIS_URL on this node too, or stop every node that has it first.`;

/** Keeps one document renewed; tells onLost when it was taken over or (sole) went unrenewed for the term. */
class Renewal implements WriterLease {
  private timer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | null = null;
  private stopped = false;
  private failing = false;
  /** performance.now() past which a sole writer no longer holds its lease. */
  private validUntil = Infinity;
  private readonly everyMs: number;

  constructor(
    private readonly writers: Collection<WriterDoc>,
    private readonly doc: WriterDoc,
    private readonly dbName: string,
    private readonly termMs: number,
    private readonly options: WriterOptions,
  ) {
    this.everyMs = termMs / RENEWS_PER_TERM;
  }

  /** `sentAt`: when the write that made the document was sent. */
  start(sentAt: number): void {
    this.landed(sentAt);
    this.schedule(this.everyMs);
  }

  holds(): boolean {
    return performance.now() < this.validUntil;
  }

  async release(): Promise<void> {
    if (this.stopped) return;
    this.stop();
    await this.inFlight;
    await this.writers.deleteOne({ _id: this.doc._id, tenure: this.doc.tenure }).catch(() => undefined);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.inFlight = this.renew().finally(() => (this.inFlight = null));
    }, ms);
    this.timer.unref();
  }

  private landed(sentAt: number): void {
    this.failing = false;
    if (this.doc.kind !== 'sole') return; // a shared node's writes are guarded by home leases, not by this
    clearTimeout(this.deadline);
    this.validUntil = sentAt + this.termMs - STOP_MARGIN_MS;
    const ms = this.validUntil - performance.now();
    this.deadline = setTimeout(
      () =>
        this.lose(
          `could not renew the sole-writer lease of MongoDB database ${this.dbName} for ` +
            `${(this.termMs - STOP_MARGIN_MS) / 1000} s (the store unreachable): another node may take it now, ` +
            `so this node stops writing`,
        ),
      Math.max(0, ms),
    );
    this.deadline.unref();
  }

  private async renew(): Promise<void> {
    const sentAt = performance.now();
    try {
      const renewed = await this.writers.updateOne(
        { _id: this.doc._id, tenure: this.doc.tenure },
        { $inc: { beat: 1 }, $set: { renewedAt: new Date() } },
      );
      if (this.stopped) return;
      if (renewed.matchedCount === 1) {
        this.landed(sentAt);
        this.schedule(this.everyMs);
      } else this.lose(await this.takenBy());
    } catch (e) {
      if (this.stopped) return;
      if (!this.failing) this.options.onRenewalFailed?.(e);
      this.failing = true;
      this.schedule(Math.min(1000, this.everyMs));
    }
  }

  /** Who holds the store now, for the error line. */
  private async takenBy(): Promise<string> {
    const sole = await this.writers.findOne({ _id: SOLE }).catch(() => null);
    const holder =
      sole && sole.tenure !== this.doc.tenure ? `node ${sole.node} holds it now` : 'another node cleared it';
    return this.doc.kind === 'sole'
      ? `lost the sole-writer lease of MongoDB database ${this.dbName}: ${holder} (this node did not renew it ` +
          `within ${this.termMs / 1000} s, e.g. after a long pause), so this node stops writing`
      : `the heartbeat of this node (REDIS_URL) in MongoDB database ${this.dbName} was cleared` +
          (sole ? ` by node ${sole.node}, which writes it as its sole writer` : '') +
          ` (this node did not renew it within ${this.termMs / 1000} s), so this node stops writing`;
  }

  private lose(message: string): void {
    if (this.stopped) return;
    this.stop();
    this.validUntil = -Infinity;
    this.options.onLost(message);
  }

  private stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.deadline);
  }
}
