// One board's committed outboxes copied to the event log, in seq order, and the board's listeners
// told of each commit once its events are there (actors/board-actor.ts commits; this copies). A
// store that logs in the commit itself (the embedded store) has nothing left to copy but what an
// earlier failure left; on one that does not (MongoDB), the commits that land while one copy is on
// its way are copied together in the next.
import type { Board } from '../machines/board.js';
import { eventId, type BoardRecord, type CommittedEvent, type EventRecord, type Store } from '../store/ports/store.js';
import { afterThisTurn } from '../store/ports/maybe.js';

/**
 * On a store that copies outboxes to the log after the commit (MongoDB), a copy starts this long
 * after the first commit it takes, or once COPY_BATCH_EVENTS wait: each copy is a durable write
 * beside the next commit's, and one agent's claim then submit otherwise paid for one per commit.
 * Listeners hear of a commit once it is in the log: on such a store, up to this much later.
 */
export const COPY_DELAY_MS = 20;
const COPY_BATCH_EVENTS = 64;

export type OutboxEvent = NonNullable<BoardRecord['outbox']>[number];

/** A committed event as the header's outbox keeps it (written as literals: V8 copies a spread with more properties slowly). */
export const logged = (e: CommittedEvent): OutboxEvent => ({
  _id: eventId(e.boardId, e.seq),
  boardId: e.boardId,
  seq: e.seq,
  type: e.type,
  actor: e.actor,
  workId: e.workId,
  at: e.at,
  data: e.data,
});

/** Outbox events as the log stores them (an event is written once, at version 1). */
export const logRecords = (outbox: readonly OutboxEvent[]): EventRecord[] =>
  outbox.map((e) => ({
    _id: e._id,
    boardId: e.boardId,
    seq: e.seq,
    type: e.type,
    actor: e.actor,
    workId: e.workId,
    at: e.at,
    data: e.data,
    version: 1,
  }));

export class OutboxCopier {
  /** Settles once every outbox queued so far is copied to the log (copies run one after another). */
  settled: Promise<void> = Promise.resolve();
  /** Commits whose outboxes wait for the copy under way: the next copy takes them all, in one insert. */
  private toCopy: { outbox: BoardRecord['outbox']; events: CommittedEvent[]; board: Board }[] = [];
  /** Events of the commits in `toCopy`. */
  private eventsToCopy = 0;
  /** Starts the next copy before its delay is out (its queue is full). */
  private copyNow: (() => void) | null = null;
  /**
   * Every event up to this seq is known to be in the log. A commit's outbox carries the earlier
   * events not yet known to be there, so none is lost when the next commit replaces the header's
   * outbox before the copy of the one before it landed (or when that copy failed, or the node died).
   */
  copiedThrough = 0;

  constructor(
    private readonly ports: Pick<Store, 'boards' | 'events'>,
    /** Tells the board's listeners of a commit, once its events are in the log. */
    private readonly tell: (events: CommittedEvent[], board: Board) => void,
    /** A copy failed: the actor reads the board again before its next command. */
    private readonly failed: () => void,
  ) {}

  /** Queues a commit's outbox for the next copy to the log, and its events for the listeners after it (`tell`). */
  queue(outbox: BoardRecord['outbox'], events: CommittedEvent[], board: Board): void {
    this.toCopy.push({ outbox, events, board });
    this.eventsToCopy += events.length;
    if (this.toCopy.length === 1) this.settled = this.settled.then(() => this.copyQueued());
    else if (this.eventsToCopy >= COPY_BATCH_EVENTS) this.copyNow?.();
  }

  /**
   * Copies the outboxes of every commit queued since the last copy, in one insert, then tells the
   * listeners of each in commit order. The commits that land while one copy is on its way wait for
   * the next, together: on a store where each insert is a durable write of its own, a busy board
   * spends one per copy, not one per commit.
   */
  private async copyQueued(): Promise<void> {
    if (this.ports.boards.logsInCommit !== true && this.eventsToCopy < COPY_BATCH_EVENTS)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, COPY_DELAY_MS);
        this.copyNow = () => (clearTimeout(timer), resolve());
      });
    this.copyNow = null;
    await afterThisTurn(); // the answers are written first: the copy's encoding is not on their path
    const taken = this.toCopy;
    this.toCopy = [];
    this.eventsToCopy = 0;
    const events = new Map<number, OutboxEvent>();
    for (const { outbox } of taken) for (const e of outbox ?? []) events.set(e.seq, e);
    await this.copy([...events.values()].sort((a, b) => a.seq - b.seq));
    for (const { events: told, board } of taken) this.tell(told, board);
  }

  /** The outbox's events not yet known to be in the log (in seq order, as the outbox keeps them). */
  notCopied(outbox: BoardRecord['outbox'], copied = this.copiedThrough): NonNullable<BoardRecord['outbox']> {
    return (outbox ?? []).filter((e) => e.seq > copied);
  }

  /**
   * Copies the committed outbox to the event log in seq order (a reader of the log never sees a
   * later event without the earlier ones); what was copied before is skipped. On failure the actor is
   * told (`failed`): its next command reloads and retries.
   */
  async copy(outbox: BoardRecord['outbox']): Promise<void> {
    const missing = this.notCopied(outbox);
    if (!missing.length) return;
    try {
      await this.ports.events.insertMissing(logRecords(missing));
      this.copiedThrough = Math.max(this.copiedThrough, missing.at(-1)!.seq);
    } catch {
      this.failed();
    }
  }
}
