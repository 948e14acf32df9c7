// One board's actor on this node: a bounded mailbox that runs one decision at a time, commits it
// with the board-version check (reloading and re-deciding when another node won the race),
// copies the committed events to the log, and tells its listeners. Decisions are pure functions
// of the board and the time; the actor does the I/O.
import type { Board, BoardItem } from '../machines/board.js';
import type { Decide } from '../machines/board-decision.js';
import type { BoardRecord, EventRecord, Header, Store } from '../store/ports/store.js';

export type CommittedEvent = Omit<EventRecord, 'version' | '_id'>;

export type BoardListener = (events: CommittedEvent[], board: Board) => void;

export type BoardPorts = Pick<Store, 'boards' | 'events'>;

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

export const MAILBOX_LIMIT = 1000;
const COMMIT_ATTEMPTS = 16;

export function boardOf(record: BoardRecord): Board {
  return { items: record.items as Record<string, BoardItem>, nextWorkSeq: record.nextWorkSeq, nextFencingToken: record.nextFencingToken };
}

export function nextDeadline(board: Board): number | null {
  let min: number | null = null;
  for (const item of Object.values(board.items)) {
    const at = item.life.lease?.expiresAt;
    if (at !== undefined && (min === null || at < min)) min = at;
  }
  return min;
}

export class BoardActor {
  private readonly mailbox: (() => Promise<void>)[] = [];
  private running = false;
  /** The board as this node last committed or loaded it; the record without its items (they are in `board`). */
  private current: { record: Header<BoardRecord>; board: Board } | null = null;
  private readonly listeners = new Set<BoardListener>();
  lastUsed = 0;

  constructor(
    readonly boardId: string,
    private readonly ports: BoardPorts,
    private readonly clock: () => number,
  ) {}

  /** Runs `decide` after every earlier command, commits it, and resolves with its reply. */
  ask<R>(decide: Decide<R>): Promise<R> {
    this.lastUsed = this.clock();
    if (this.mailbox.length >= MAILBOX_LIMIT) return Promise.reject(new BoardBusyError(this.boardId));
    return new Promise<R>((resolve, reject) => {
      this.mailbox.push(() => this.handle(decide).then(resolve, reject));
      void this.drain();
    });
  }

  /** The committed board as the store has it now (fresh across nodes). */
  async read(): Promise<{ board: Board; record: BoardRecord }> {
    this.lastUsed = this.clock();
    const record = await this.ports.boards.get(this.boardId);
    if (!record) throw new BoardMissingError(this.boardId);
    return { board: boardOf(record), record };
  }

  /**
   * Makes the event log hold everything committed so far: the last commit's outbox may still be
   * on its way (it is copied just after the commit, possibly by another node).
   */
  async syncLog(): Promise<void> {
    const [record] = await this.ports.boards.select({ _id: this.boardId }, ['outbox']);
    const outbox = record?.outbox ?? [];
    if (!outbox.length) return;
    const copied = await this.ports.events.count({ boardId: this.boardId, seq: { $gte: outbox[0]!.seq, $lte: outbox.at(-1)!.seq } });
    if (copied < outbox.length) await this.copyToLog(outbox);
  }

  /** Another node committed up to `seq`: a cached board older than that is reloaded before the next command. */
  saw(seq: number): void {
    if (this.current && this.current.record.lastSeq < seq) this.current = null;
  }

  subscribe(listener: BoardListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get idle(): boolean {
    return !this.running && this.mailbox.length === 0;
  }

  /** The nearest lease deadline this node knows of, for the scheduler. */
  get deadline(): number | null {
    return this.current ? this.current.record.nextDeadline : null;
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let next = this.mailbox.shift(); next; next = this.mailbox.shift()) await next();
    } finally {
      this.running = false;
    }
  }

  private async handle<R>(decide: Decide<R>): Promise<R> {
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
      const current = this.current ?? (await this.load());
      const now = this.clock();
      const decision = decide(current.board, now);
      if (decision.board === current.board && decision.events.length === 0) return decision.reply;
      const events = decision.events.map((e, i): CommittedEvent => ({ ...e, boardId: this.boardId, seq: current.record.lastSeq + 1 + i, at: now }));
      // Only the items the decision replaced travel to the store (decisions copy what they change).
      const set: Record<string, unknown> = {
        nextWorkSeq: decision.board.nextWorkSeq,
        nextFencingToken: decision.board.nextFencingToken,
        lastSeq: current.record.lastSeq + events.length,
        nextDeadline: nextDeadline(decision.board),
        outbox: events.map((e) => ({ _id: `${e.boardId}:${e.seq}`, ...e })),
      };
      for (const [workId, item] of Object.entries(decision.board.items)) if (current.board.items[workId] !== item) set[`items.${workId}`] = item;
      const updated = await this.ports.boards.patch(this.boardId, current.record.version, set);
      if (!updated) {
        this.current = null; // another node committed first: reload and decide again
        continue;
      }
      this.current = { record: updated, board: decision.board };
      await this.copyToLog(updated.outbox);
      for (const listener of this.listeners) listener(events, decision.board);
      return decision.reply;
    }
    throw new BoardBusyError(this.boardId);
  }

  private async load(): Promise<{ record: Header<BoardRecord>; board: Board }> {
    const record = await this.ports.boards.get(this.boardId);
    if (!record) throw new BoardMissingError(this.boardId);
    await this.copyToLog(record.outbox);
    this.current = { record, board: boardOf(record) };
    return this.current;
  }

  /**
   * Copies the committed outbox to the event log in seq order (a reader of the log never sees a
   * later event without the earlier ones); what was copied before is skipped. On failure the next
   * command reloads and retries.
   */
  private async copyToLog(outbox: BoardRecord['outbox']): Promise<void> {
    try {
      await this.ports.events.insertMissing((outbox ?? []).map((event) => ({ ...event, version: 1 })));
    } catch {
      this.current = null;
    }
  }
}
