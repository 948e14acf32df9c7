// One board's actor on this node. Commands wait in a bounded mailbox; whatever is waiting when
// the actor gets to it is decided one command after another on the evolving board and committed
// in one version-checked write (group commit), and each caller gets its own reply or refusal only
// once that write is durable. While a write is on its way, what came in meanwhile is decided on
// the board it leaves (pipelined); where the store applies writes in order, that batch's write is
// queued at once and names the commit it stands on (its commitId), landing only on it. A lost race
// (another node committed first) reloads and decides the batch, and what was decided on it, again.
// Decisions are pure functions of the board and the time; the actor does the I/O.
// Committed boards are immutable, so reads are served from the one this node holds whenever the
// store's version says it is still the latest; when it is behind, only what changed since is read.
// A batch that writes nothing (a refusal, a repeated claim) meets no version check of its own, so
// it is answered from the held board only while this node knows no other could have committed
// since that board was checked (Currency); otherwise the store's version is read first.
import { randomUUID } from 'node:crypto';
import { boardFrom, entryCount, storedEntry, withStored, type Board } from '../machines/board.js';
import { nextExpiry } from '../machines/board-queries.js';
import type { StoredEntry } from '../machines/board-entries.js';
import { closedDays, foldStats, oldestDayKept, type BoardStats } from '../machines/board-stats.js';
import { archiveDays } from './stats-archive.js';
import { logged, logRecords, OutboxCopier } from './outbox-copier.js';
import type { Decide, NewEvent } from '../machines/board-decision.js';
import {
  type BoardRecord,
  type CommitOptions,
  type CommittedEvent,
  type ItemWrites,
  type LoadedBoard,
  type Store,
} from '../store/ports/store.js';
import { andThen, type Maybe } from '../store/ports/maybe.js';

export type { CommittedEvent };

/** Told of a committed batch: its events, the board it left, and the actor (so one listener serves every board). */
export type BoardListener = (events: CommittedEvent[], board: Board, actor: BoardActor) => void;

/** No listeners: shared by every actor until one subscribes (a per-board Set costs more than the board's indexes). */
const NO_LISTENERS: readonly BoardListener[] = Object.freeze([]);

export type BoardPorts = Pick<Store, 'boards' | 'events' | 'boardStatsDays'>;

export class BoardBusyError extends Error {
  constructor(readonly boardId: string) {
    super(`board ${boardId} is busy`);
    this.name = 'BoardBusyError';
  }
}

export class BoardMissingError extends Error {
  constructor(readonly boardId: string) {
    super(`board ${boardId} does not exist`);
    this.name = 'BoardMissingError';
  }
}

/**
 * A token that stays the same for as long as no other node can commit to the board without this
 * node hearing of it (this node the board's home throughout, its bus connected throughout), and
 * null while that is not known. A board checked against the store under a token is current for
 * as long as the token stays the same.
 */
export type Currency = (boardId: string) => string | null;
/** One node alone on its store (the embedded store locks its directory): no other node commits. */
export const SOLE_WRITER: Currency = () => 'sole';

export const MAILBOX_LIMIT = 1000;
/** A commit this long after the one before it ends a quiet spell (a restore point of the quiet board is due). */
export const QUIET_MS = 10 * 60_000;
/** Commands decided into one commit at most (bounds one write and its outbox). */
export const BATCH_LIMIT = 128;
/**
 * Events a commit's outbox may carry from earlier commits whose copy to the log is not yet known to
 * have landed. Past it the commit first waits for the copies under way, and is refused as busy
 * when the log still does not take them (the store is failing): the header never grows unbounded.
 */
export const CARRIED_LIMIT = 4096;
const COMMIT_ATTEMPTS = 16;

export interface Committed {
  board: Board;
  /**
   * The stored header (the items are in `board`). A held one keeps no outbox once every event in it
   * is in the log: `newest` says what its readers need of it.
   */
  record: BoardRecord;
  /** The last event of the commit's outbox, as far as its readers need it (absent: read `record.outbox`). */
  newest?: Newest | null;
}

/** An outbox's last event: its seq, and when it was committed. */
export interface Newest {
  seq: number;
  at: number;
}

/** What `outbox` ends with, as `Newest` (null when it is empty or absent). */
const newestIn = (outbox: BoardRecord['outbox']): Newest | null => {
  const last = outbox?.at(-1);
  return last ? { seq: last.seq, at: last.at } : null;
};

/** The last event of a committed board's outbox: held beside its header, or read from its outbox. */
export const newestOf = (committed: { record: Pick<BoardRecord, 'outbox'>; newest?: Newest | null }): Newest | null =>
  committed.newest !== undefined ? committed.newest : newestIn(committed.record.outbox);

interface Pending {
  decide: Decide<unknown>;
  resolve: (reply: unknown) => void;
  reject: (error: unknown) => void;
  /** Writes of it that lost to another node's commit so far. */
  attempts: number;
}

type Outcome = { ok: true; reply: unknown } | { ok: false; error: unknown };

/** A batch decided on a board (`base`), not yet written. */
interface Decided {
  batch: Pending[];
  base: Committed;
  now: number;
  board: Board;
  events: CommittedEvent[];
  changed: Set<string>;
  /** Each caller's reply or refusal, in batch order. */
  outcomes: Outcome[];
  /** Its write, when queued while the one it stands on was under way. */
  started?: Started;
}

/** Whether a decided batch changed anything to write. */
const changesAnything = (d: Decided): boolean => d.board !== d.base.board || d.events.length > 0;

/** A write under way: the header it writes and whether it landed, and when the store no longer needs this process for it. */
interface Started {
  written: Promise<Written>;
  handedOver: Promise<void>;
}

/** A commit on its way: the header it writes, whether it landed, and the last event it put in the log (a store that logs in the commit). */
interface Written {
  record: BoardRecord;
  newest: Newest | null;
  landed: Promise<boolean>;
  loggedThrough: number | null;
}

function answer(batch: Pending[], outcomes: Outcome[]): void {
  batch.forEach((p, i) => {
    const outcome = outcomes[i]!;
    if (outcome.ok) p.resolve(outcome.reply);
    else p.reject(outcome.error);
  });
}

/** Whether a commit at `now` comes QUIET_MS or more after the one that left `before` (whose events are its outbox). */
function endsQuiet(before: Committed, now: number): boolean {
  const last = newestOf(before)?.at;
  return last !== undefined && now - last >= QUIET_MS;
}

/** A command that changes nothing: asked only to have the board read again. */
const unchanged: Decide<null> = (board) => ({ board, events: [], reply: null });

/** Shared by every held board: no decision is under way on it. */
const NOTHING_CHANGED: ReadonlySet<string> = new Set();

/**
 * A committed board as the actor holds it: without the keys the decision that made it changed,
 * which only that commit's write reads (a Set of them kept per board costs about 160 bytes).
 */
const settled = (board: Board): Board => (board.changed.size ? { ...board, changed: NOTHING_CHANGED } : board);

function boardOf({ record, items }: LoadedBoard): Board {
  return boardFrom(
    items as StoredEntry[],
    record.nextWorkSeq,
    record.nextFencingToken,
    record.retiredLeases ?? [],
    record.paused ?? null,
    record.removedVersion ?? 0,
  );
}

export class BoardActor {
  private readonly mailbox: Pending[] = [];
  private running = false;
  private current: Committed | null = null;
  /** Another node committed after `current`: it is brought up to date before the next decision. */
  private behind = false;
  /** The latest seq another node was heard to commit (`saw`), also while nothing was held: a first load older than it is behind. */
  private heardThrough = 0;
  /** The committed outboxes on their way to the event log, and the listeners told after. */
  private readonly outboxes: OutboxCopier;
  /**
   * This node's commits on their way to the store, oldest first, each with the version it writes:
   * a read that finds the store ahead of `current` waits for the one that wrote what it found
   * (not for a later one queued behind it) rather than reading back what it wrote.
   */
  private readonly writing: { version: number; landing: Promise<boolean> }[] = [];
  /** Replaced, never changed, on (un)subscribing: a listener leaving while they are told is not skipped past. */
  private listeners: readonly BoardListener[] = NO_LISTENERS;
  /** The currency token under which `current` was last found to be the store's latest (null: not since it last changed hands). */
  private vouchedBy: string | null = null;
  /**
   * A commit whose store call failed after it was on its way: it may have landed all the same. Its
   * listeners are told of it once a read finds it landed (the next read, which its failure asks for
   * at once), so the events its callers were told may not have happened reach the sockets.
   */
  private unsure: { commitId: string; events: CommittedEvent[]; board: Board } | null = null;
  lastUsed = 0;

  constructor(
    readonly boardId: string,
    private readonly ports: BoardPorts,
    private readonly clock: () => number,
    /** Told when a listener throws: a committed command still gets its reply. */
    private readonly onListenerError: (error: unknown) => void = () => undefined,
    /** Told, once the commit is durable, of the board as it stood before a commit that ended a quiet spell (and of the board's id). */
    private readonly onQuiet: (before: Committed, boardId: string) => void = () => undefined,
    private readonly currency: Currency = SOLE_WRITER,
  ) {
    this.outboxes = new OutboxCopier(
      ports,
      (events, board) => this.tell(events, board),
      () => void (this.behind = true),
    );
  }

  /** Runs `decide` after every earlier command, commits it, and resolves with its reply. */
  ask<R>(decide: Decide<R>): Promise<R> {
    this.lastUsed = this.clock();
    if (this.mailbox.length >= MAILBOX_LIMIT) return Promise.reject(new BoardBusyError(this.boardId));
    return new Promise<R>((resolve, reject) => {
      this.mailbox.push({ decide, resolve: resolve as (reply: unknown) => void, reject, attempts: 0 });
      void this.drain();
    });
  }

  /**
   * The latest committed board. The one this node holds is used without asking the store while
   * nothing of this node's is on its way there and the currency token it was last found the latest
   * under stands (this node is surely the home and heard every notice since, as `stillLatest`);
   * else when the store's version (one small read, no items) says nobody committed since, or once
   * this node's own commit under way lands (a reader elsewhere may already see that commit: a read
   * here must not answer older); otherwise what changed since is read.
   */
  read(): Maybe<Committed> {
    this.lastUsed = this.clock();
    const token = this.currency(this.boardId);
    if (this.current && !this.writing.length && token !== null && token === this.vouchedBy && !this.behind) {
      return this.current;
    }
    return andThen(this.ports.boards.versionOf(this.boardId), (version) => {
      if (version === null) throw new BoardMissingError(this.boardId);
      if (this.current && this.current.record.version >= version) {
        this.vouchedBy = token;
        return this.current;
      }
      return this.catchUp(version);
    });
  }

  /** The board at `version` or later, which this node does not hold yet. */
  private async catchUp(version: number): Promise<Committed> {
    const mine = this.writing.find((w) => w.version >= version);
    if (mine) {
      await mine.landing;
      if (this.current && this.current.record.version >= version) return this.current;
    }
    return this.refresh();
  }

  /** The board this node last committed or loaded, without asking the store (may be behind another node). */
  get held(): Committed | null {
    return this.current;
  }

  /**
   * Makes the event log hold everything committed so far: the last commit's outbox may still be
   * on its way (it is copied just after the commit, possibly by another node).
   */
  async syncLog(): Promise<void> {
    const [record] = await this.ports.boards.select({ _id: this.boardId }, ['outbox']);
    const outbox = record?.outbox ?? [];
    if (!outbox.length) return;
    const copied = await this.ports.events.count({
      boardId: this.boardId,
      seq: { $gte: outbox[0]!.seq, $lte: outbox.at(-1)!.seq },
    });
    if (copied < outbox.length) await this.outboxes.copy(outbox);
  }

  /** Whether the board is loaded here: only then does another node's commit make it stale. */
  get loaded(): boolean {
    return this.current !== null;
  }

  /** Another node committed up to `seq`: a held board older than that is reloaded before the next command. */
  saw(seq: number): void {
    if (seq > this.heardThrough) this.heardThrough = seq;
    if (this.current && this.current.record.lastSeq < seq) this.behind = true;
  }

  subscribe(listener: BoardListener): () => void {
    if (!this.listeners.includes(listener))
      this.listeners = this.listeners.length ? [...this.listeners, listener] : [listener]; // a literal: no spare room
    return () => {
      const left = this.listeners.filter((l) => l !== listener);
      this.listeners = left.length ? left : NO_LISTENERS;
    };
  }

  /** Commands waiting behind the commit under way. */
  get waiting(): number {
    return this.mailbox.length;
  }

  get idle(): boolean {
    return !this.running && this.mailbox.length === 0;
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      let ahead: Decided | null = null;
      while (ahead || this.mailbox.length) {
        let decided = ahead;
        if (!decided) {
          const batch = this.mailbox.splice(0, BATCH_LIMIT);
          try {
            decided = this.decideOn(await this.base(), batch);
          } catch (error) {
            // The board could not be read (the store failed, or the board is gone): nothing decided.
            for (const p of batch) p.reject(error);
            continue;
          }
        }
        ahead = await this.commit(decided);
      }
    } finally {
      this.running = false;
    }
  }

  /** The board to decide on: the one held, unless another node committed since. */
  private base(): Promise<Committed> | Committed {
    return this.current && !this.behind ? this.current : this.refresh();
  }

  /** Decides `batch` in order on `base` (pure: nothing is written or answered). */
  private decideOn(base: Committed, batch: Pending[]): Decided {
    const now = this.clock();
    const outcomes: Outcome[] = [];
    const events: CommittedEvent[] = [];
    const changed = new Set<string>();
    let board = base.board;
    for (const { decide } of batch) {
      try {
        const decision = decide(board, now);
        if (decision.board !== board) for (const id of decision.board.changed) changed.add(id);
        board = decision.board;
        const first = base.record.lastSeq + events.length + 1;
        for (const e of decision.events) events.push(this.numbered(e, base.record.lastSeq + events.length + 1, now));
        // The seqs are listed only for a decision that asks for them (the claim and submit path asks none).
        const reply = decision.numbered ? decision.numbered(decision.events.map((_, i) => first + i)) : decision.reply;
        outcomes.push({ ok: true, reply });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
    return { batch, base, now, board, events, changed, outcomes };
  }

  /**
   * Commits what `decided` changed in one version-checked write and answers its callers once it is
   * durable. While that write is on its way, the commands that came in meanwhile are decided on the
   * board it leaves (pipelined) and returned, to be committed next; on a store that applies queued
   * writes in order, their write is queued at once, standing on this one (it lands only on the
   * commit it was decided on, whose id it names). Nothing decided ahead is answered before the write
   * it stands on is durable, and nothing is written on a board it was not decided on, on every store
   * and across nodes: when that write loses (another node committed first) or fails, what was decided
   * ahead goes back to the mailbox's front and is decided again (a write of it already queued cannot land).
   */
  private async commit(decided: Decided): Promise<Decided | null> {
    const { batch, base, board, events } = decided;
    if (!changesAnything(decided)) {
      // Nothing to write (refusals, a repeated claim): answered only from a board known to be the latest.
      let latest: boolean;
      try {
        latest = await this.stillLatest(base);
      } catch (error) {
        for (const p of batch) p.reject(error);
        return null;
      }
      if (latest) answer(batch, decided.outcomes);
      else this.decideAgain(batch);
      return null;
    }
    const started = decided.started ?? this.start(decided);
    let ahead: Decided | null = null;
    let written: Written | null = null;
    let landed: boolean;
    try {
      written = await started.written;
      // Decided while the store syncs the write. A store that does not say when it no longer
      // needs this process lands first; then the callers are answered first, and the next batch
      // is decided on the board as it stands (another node may have committed meanwhile).
      const meanwhile = await Promise.race([started.handedOver.then(() => true), written.landed.then(() => false)]);
      if (meanwhile && !this.behind && this.mailbox.length) {
        ahead = this.decideOn(
          { record: written.record, board, newest: written.newest },
          this.mailbox.splice(0, BATCH_LIMIT),
        );
        if (this.ports.boards.writesInOrder === true && changesAnything(ahead))
          ahead.started = this.start(ahead, written.record.commitId);
      }
      landed = await written.landed;
    } catch (error) {
      // The store failed, and its callers are told so; but the write may have landed all the same
      // (its answer lost after the store carried it out), so the board is read again before
      // anything is answered from it.
      this.behind = true;
      this.vouchedBy = null;
      for (const p of batch) p.reject(error);
      if (ahead) this.mailbox.unshift(...ahead.batch);
      if (written && events.length) {
        this.unsure = { commitId: written.record.commitId!, events, board };
        this.ask(unchanged).catch(() => undefined); // reads the board again, now or at the next command
      }
      return null;
    }
    if (!landed) {
      // Another node committed first: catch up and decide again.
      this.decideAgain(batch, ahead?.batch);
      return null;
    }
    if (written.loggedThrough !== null)
      this.outboxes.copiedThrough = Math.max(this.outboxes.copiedThrough, written.loggedThrough);
    const record = written.record;
    this.current = { record, board: settled(board), newest: written.newest };
    if (ahead && !ahead.started && this.behind) {
      // Another node committed while this write was on its way: what was decided ahead of it (not
      // written) is decided again on the board as it now stands.
      this.mailbox.unshift(...ahead.batch);
      ahead = null;
    }
    try {
      if (endsQuiet(base, decided.now)) this.onQuiet(base, this.boardId);
    } catch (e) {
      this.onListenerError(e); // a committed command still gets its reply
    }
    // Durable now, the events with it (in the log already where the store writes it in the
    // commit, else in the board's outbox): the callers have their answers while the outbox is
    // copied to the log (readers of the log copy it first themselves).
    answer(batch, decided.outcomes);
    // Copied in commit order, off the mailbox's path: the next batch's write can share a
    // commit with this copy. Listeners hear of a batch once it is in the log.
    this.outboxes.queue(record.outbox, events, board);
    return ahead;
  }

  /**
   * Whether `base` is still the store's latest board: known without asking while the currency
   * token it was last checked under stands, else read from the store's version (one small read).
   */
  private async stillLatest(base: Committed): Promise<boolean> {
    const token = this.currency(this.boardId);
    if (token !== null && token === this.vouchedBy && !this.behind) return true;
    const version = await this.ports.boards.versionOf(this.boardId);
    if (version === null) throw new BoardMissingError(this.boardId);
    if (version > base.record.version) return false;
    this.vouchedBy = token;
    return true;
  }

  /** Another node committed since `batch` was decided: catch up and decide it again (each command at most COMMIT_ATTEMPTS times), before `after`. */
  private decideAgain(batch: Pending[], after: Pending[] = []): void {
    this.behind = true;
    const again = batch.filter((p) => {
      if (++p.attempts < COMMIT_ATTEMPTS) return true;
      p.reject(new BoardBusyError(this.boardId));
      return false;
    });
    this.mailbox.unshift(...again, ...after);
  }

  /** Starts the write of `decided` (standing on the commit `after` names, when given). */
  private start(decided: Decided, after?: string): Started {
    let applied!: () => void;
    const handedOver = new Promise<void>((resolve) => (applied = resolve));
    const written = this.write(decided, { applied, ...(after === undefined ? {} : { after }) });
    // read() waits on the write of the version it found; a write given up on (it stood on one that failed) is handled here.
    const on = { version: decided.base.record.version + 1, landing: written.then((w) => w.landed).catch(() => false) };
    this.writing.push(on);
    void on.landing.then(() => {
      const at = this.writing.indexOf(on);
      if (at >= 0) this.writing.splice(at, 1);
    });
    return { written, handedOver };
  }

  private numbered(e: NewEvent, seq: number, at: number): CommittedEvent {
    return { type: e.type, actor: e.actor, workId: e.workId, data: e.data, boardId: this.boardId, seq, at };
  }

  /**
   * Starts one version-checked commit of what the batch changed: the changed (or removed) entries,
   * the counters, the outbox. Resolves with the header it writes as soon as the write is on its
   * way; `landed` says whether it landed.
   */
  private async write(
    { base: current, board, changed, events, now }: Decided,
    options: CommitOptions,
  ): Promise<Written> {
    // A store that writes the log in the commit's own transaction is handed the events; the header
    // then keeps only the newest (when the board last changed), and nothing waits to be copied.
    const logs = this.ports.boards.logsInCommit === true;
    // Standing on a commit still under way: its events go to the log with it, or nothing lands.
    const copied = logs && options.after !== undefined ? current.record.lastSeq : this.outboxes.copiedThrough;
    let carried = this.outboxes.notCopied(current.record.outbox, copied);
    if (carried.length > CARRIED_LIMIT) {
      await this.outboxes.settled;
      carried = this.outboxes.notCopied(current.record.outbox);
      if (carried.length > CARRIED_LIMIT) throw new BoardBusyError(this.boardId);
    }
    const outbox = [...carried, ...events.map(logged)];
    const { kept: stats, closed } = closedDays(
      foldStats(current.record.stats as BoardStats | undefined, events, board),
      now,
    );
    // Before the commit that drops them from the header: a day is always in one or the other.
    if (closed.length) await archiveDays(this.ports, this.boardId, closed, current.record.version, oldestDayKept(now));
    const set: Partial<BoardRecord> = {
      commitId: randomUUID(),
      nextWorkSeq: board.nextWorkSeq,
      nextFencingToken: board.nextFencingToken,
      lastSeq: current.record.lastSeq + events.length,
      nextDeadline: nextExpiry(board),
      outbox: logs ? outbox.slice(-1) : outbox,
      // The index's own: a committed board's index is never changed (a draft copies it), so the held
      // record need not keep a copy of its own beside it.
      counts: board.index.counts,
      entries: entryCount(board),
      stats: stats as unknown as Record<string, unknown>,
    };
    if (board.retired !== current.board.retired) set.retiredLeases = [...board.retired];
    if (board.paused !== current.board.paused) set.paused = board.paused;
    if (board.removedVersion !== current.board.removedVersion) set.removedVersion = board.removedVersion;
    const writes: ItemWrites = { put: [], removed: [] };
    // A changed key names an item, a doctrine entry or a clause; one no longer on the board was removed (a rewind's items).
    for (const key of changed) {
      const entry = storedEntry(board, key);
      if (entry) (writes.put as StoredEntry[]).push(entry);
      else (writes.removed as string[]).push(key);
    }
    const landed = this.ports.boards.commit(
      this.boardId,
      current.record.version,
      set,
      writes,
      logs ? logRecords(outbox) : undefined,
      options,
    );
    return {
      // A store that logs in the commit has every event of the outbox in the log once this lands:
      // the held header keeps none of it (about 400 bytes a board), only `newest`.
      record: { ...current.record, ...set, ...(logs && { outbox: undefined }), version: current.record.version + 1 },
      newest: newestIn(outbox),
      landed,
      loggedThrough: logs && outbox.length ? outbox.at(-1)!.seq : null,
    };
  }

  /** Listeners run after the commit; one that throws is reported and never undoes the reply. */
  private tell(events: CommittedEvent[], board: Board): void {
    for (const listener of this.listeners) {
      try {
        listener(events, board, this);
      } catch (e) {
        this.onListenerError(e);
      }
    }
  }

  /** The board as stored: what changed since the held one when there is one, else the whole board. */
  private async refresh(): Promise<Committed> {
    const held = this.current;
    const token = this.currency(this.boardId);
    this.behind = false; // a notice of a later commit arriving meanwhile sets it again
    let loaded: Committed;
    if (held) {
      const delta = await this.ports.boards.changesSince(this.boardId, held.record.version);
      if (!delta) throw new BoardMissingError(this.boardId);
      const { record } = delta;
      const board = withStored(held.board, delta.items as StoredEntry[], delta.removed, {
        nextWorkSeq: record.nextWorkSeq,
        nextFencingToken: record.nextFencingToken,
        retired: record.retiredLeases ?? [],
        paused: record.paused ?? null,
        removedVersion: record.removedVersion ?? 0,
      });
      loaded = { record, board: settled(board), newest: newestIn(record.outbox) };
    } else {
      const stored = await this.ports.boards.load(this.boardId);
      if (!stored) throw new BoardMissingError(this.boardId);
      loaded = { record: stored.record, board: boardOf(stored), newest: newestIn(stored.record.outbox) };
    }
    await this.outboxes.copy(loaded.record.outbox);
    const unsure = this.unsure;
    this.unsure = null;
    // The commit that failed landed, and nothing after it: its events are in the log, and told in commit order.
    // (One a later commit stands on is told by the log: sockets fill the gap that commit's events show.)
    if (unsure && loaded.record.commitId === unsure.commitId)
      this.outboxes.queue(undefined, unsure.events, unsure.board);
    // Every event of the outbox is in the log now: the held header need not keep them.
    if (loaded.record.outbox?.length && !this.outboxes.notCopied(loaded.record.outbox).length)
      loaded = { ...loaded, record: { ...loaded.record, outbox: undefined } };
    // A commit that finished while this read was under way is newer: keep it.
    if (!this.current || this.current.record.version <= loaded.record.version) this.current = loaded;
    // Another node's commit heard while the board was read, and later than what was read: read again before vouching.
    if (this.current.record.lastSeq < this.heardThrough) this.behind = true;
    this.vouchedBy = token;
    return this.current;
  }
}
