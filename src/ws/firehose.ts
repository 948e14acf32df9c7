// The operators' firehose (DOMAIN.md "Operators"): every board's events as this node hears them
// from the bus (a node receives every board's while a firehose is open on it), each tagged with
// its board, in seq order per board, named when its name is known (with its owner's address, for
// operators only ever see it) and its actor too, and sampled per socket: at most
// FIREHOSE.perSecond in any second, the rest counted and reported in `firehose.dropped` messages.
// Nothing here ever reads the log: the firehose is a view, not a record (a board's own
// subscription is the one that misses nothing).
import type { CommittedEvent } from '../../actors/board-actor.js';
import { eventBody } from './frames.js';
import { FIREHOSE } from './protocol.js';

/** What a socket asked to see: all of it, or only some boards and event types. */
export interface FirehoseFilter {
  boards?: readonly string[];
  /** Event types, or prefixes ending in a dot (`lease.`). */
  types?: readonly string[];
}

/**
 * At most `limit` takes in any `windowMs`: a take is allowed once the limit-th take before it is
 * at least windowMs old, so no half-open window of that length ever holds more than `limit`.
 */
export class SlidingWindow {
  private readonly times: number[];
  private next = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {
    this.times = new Array<number>(limit).fill(-Infinity);
  }

  take(now: number): boolean {
    if (now - this.times[this.next]! < this.windowMs) return false; // the oldest of the last `limit` is still in the window
    this.times[this.next] = now;
    this.next = (this.next + 1) % this.limit;
    return true;
  }
}

interface Watch {
  boards: ReadonlySet<string> | null;
  types: readonly string[] | null;
  window: SlidingWindow;
  /** Left out since the last report. */
  dropped: number;
}

/** What the firehose needs of a socket (the hub's Connection). */
export interface FirehoseSocket {
  /** Bytes waiting to go out. */
  backlog(): number;
}

export interface FirehoseDeps<Connection extends FirehoseSocket> {
  clock: () => number;
  /** Sends one message the way the hub does (a message the transport cannot take closes the socket). */
  transmit(conn: Connection, message: string | Uint8Array): boolean;
  /** Told when the firehose opens here (its first socket) and when it closes (its last): every board's commits are wanted meanwhile; resolves once they come. */
  hearAll(on: boolean): Promise<void>;
  /** A board's name, for the frames (null: a board deleted meanwhile). Absent, frames carry ids only. */
  boardName?: (boardId: string) => Promise<string | null>;
  /** The address of a board's owner, read with its name (null: none). Absent, frames carry none. */
  ownerEmail?: (boardId: string) => Promise<string | null>;
  /** An actor's name as known now (Names.nameOf). Absent, frames carry actor ids only. */
  actorName?: (principal: string) => string | undefined;
}

/** A socket this far behind skips firehose events (counted as dropped) rather than being closed as a slow consumer. */
const FIREHOSE_BACKLOG = 256 * 1024;
/** Boards whose last seq is remembered for ordering; the oldest are forgotten beyond. */
const BOARDS_REMEMBERED = 10_000;
/** A board's name is read again this long after it was read (a rename shows within it). */
const NAME_KEPT_MS = 60_000;

export class Firehose<Connection extends FirehoseSocket> {
  private readonly watches = new Map<Connection, Watch>();
  /** The last seq passed on per board, so a late or repeated bus message never goes out of order. */
  private readonly lastSeq = new Map<string, number>();
  private readonly frames = new WeakMap<CommittedEvent, Uint8Array>();
  /**
   * Board names as last read, kept as long as the board's seq is (the same order of use). A board
   * heard before its name is read goes out by id alone; its name follows on the next frames.
   */
  private readonly names = new Map<
    string,
    { name: string | null; ownerEmail: string | null; at: number; reading: boolean }
  >();
  private reporter: ReturnType<typeof setInterval> | null = null;
  /** Resolves once every board's commits come here (or at once while the firehose is closed). */
  hearing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: FirehoseDeps<Connection>) {}

  /** Starts (or, for a socket already on it, narrows anew) a socket's firehose; true when it is new. */
  watch(conn: Connection, filter: FirehoseFilter): boolean {
    const existing = this.watches.get(conn);
    const watch: Watch = {
      boards: filter.boards ? new Set(filter.boards) : null,
      types: filter.types ?? null,
      window: existing?.window ?? new SlidingWindow(FIREHOSE.perSecond, 1000),
      dropped: existing?.dropped ?? 0,
    };
    this.watches.set(conn, watch);
    if (this.watches.size === 1 && !existing) this.hearing = this.deps.hearAll(true);
    if (!this.reporter) {
      this.reporter = setInterval(() => this.report(), FIREHOSE.reportMs);
      this.reporter.unref();
    }
    return existing === undefined;
  }

  /** Ends a socket's firehose; false when it had none. */
  unwatch(conn: Connection): boolean {
    const had = this.watches.delete(conn);
    if (had && this.watches.size === 0) this.hearing = this.deps.hearAll(false);
    if (this.watches.size === 0 && this.reporter) {
      clearInterval(this.reporter);
      this.reporter = null;
    }
    return had;
  }

  watching(conn: Connection): boolean {
    return this.watches.has(conn);
  }

  /** Whether any socket is on the firehose (it hears every board). */
  get open(): boolean {
    return this.watches.size > 0;
  }

  /** The sockets on the firehose. */
  sockets(): Connection[] {
    return [...this.watches.keys()];
  }

  /** A committed batch from the bus (events in seq order). */
  deliver(boardId: string, events: readonly CommittedEvent[]): void {
    if (this.watches.size === 0) return;
    const after = this.lastSeq.get(boardId) ?? 0;
    const fresh = events.filter((e) => e.seq > after);
    if (fresh.length === 0) return;
    this.remember(boardId, fresh.at(-1)!.seq);
    const now = this.deps.clock();
    this.readName(boardId, now);
    for (const [conn, watch] of this.watches) {
      if (watch.boards && !watch.boards.has(boardId)) continue;
      for (const e of fresh) {
        if (watch.types && !watch.types.some((t) => (t.endsWith('.') ? e.type.startsWith(t) : e.type === t))) continue;
        if (conn.backlog() > FIREHOSE_BACKLOG || !watch.window.take(now)) watch.dropped++;
        else if (!this.deps.transmit(conn, this.frame(boardId, e))) break;
      }
    }
  }

  /** Tells each socket how many events it was not sent since the last report. */
  report(): void {
    for (const [conn, watch] of this.watches) {
      if (watch.dropped === 0) continue;
      const count = watch.dropped;
      watch.dropped = 0;
      this.deps.transmit(conn, JSON.stringify({ type: 'firehose.dropped', count }));
    }
  }

  close(): void {
    for (const conn of this.sockets()) this.unwatch(conn);
  }

  private remember(boardId: string, seq: number): void {
    this.lastSeq.delete(boardId); // re-inserted last: the Map's order is then least recently heard first
    this.lastSeq.set(boardId, seq);
    if (this.lastSeq.size > BOARDS_REMEMBERED) {
      const oldest = this.lastSeq.keys().next().value!;
      this.lastSeq.delete(oldest);
      this.names.delete(oldest);
    }
  }

  /** Reads a board's name (and its owner's address) when not known or read NAME_KEPT_MS ago, one read at a time. */
  private readName(boardId: string, now: number): void {
    const { boardName, ownerEmail } = this.deps;
    const known = this.names.get(boardId);
    if (!boardName || known?.reading || (known && now - known.at < NAME_KEPT_MS)) return;
    const entry = {
      name: known?.name ?? null,
      ownerEmail: known?.ownerEmail ?? null,
      at: known?.at ?? 0,
      reading: true,
    };
    this.names.set(boardId, entry);
    // Each read fills its part as it lands (the name at once); the entry is fresh when both have.
    let left = ownerEmail ? 2 : 1;
    const landed = () => void (--left === 0 && Object.assign(entry, { at: this.deps.clock(), reading: false }));
    // A failed read leaves the id (or the address missing) to stand in; both are read again later.
    boardName(boardId).then((name) => ((entry.name = name), landed()), landed);
    ownerEmail?.(boardId).then((email) => ((entry.ownerEmail = email), landed()), landed);
  }

  private frame(boardId: string, e: CommittedEvent): Uint8Array {
    let bytes = this.frames.get(e);
    if (bytes === undefined) {
      const board = this.names.get(boardId);
      bytes = Buffer.from(
        JSON.stringify({
          type: 'firehose',
          boardId,
          boardName: board?.name ?? null,
          ownerEmail: board?.ownerEmail ?? null,
          seq: e.seq,
          event: eventBody(e, this.deps.actorName?.(e.actor)),
        }),
      );
      this.frames.set(e, bytes);
    }
    return bytes;
  }
}
