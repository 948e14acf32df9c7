// A board's read side for its subscribers: where a subscription starts (after a seq, or from a
// snapshot of the board as it stands), the log replayed from there with no gap and no duplicate,
// and the shouts a resuming subscriber missed; each as its reader may see it (look.ts).
import type { Committed } from '../../../actors/board-actor.js';
import type { Maybe } from '../../../store/ports/maybe.js';
import type { EventRecord, ShoutRecord, Store } from '../../../store/ports/store.js';
import { readShouts } from '../shouts.js';
import type { Reader } from './look.js';
import { pagesAfter, replay, type ReplayEnd, type ReplayPorts } from './replay.js';
import { snapshotOf, type Snapshot } from './snapshot.js';

export interface BoardFeedDeps {
  /** The log and the shouts; of the boards, only their committed seq. */
  store: Pick<Store, 'boards' | 'events' | 'shouts'>;
  /** The board as last committed (the board actor's read), for a subscription that starts from a snapshot. */
  readBoard(boardId: string): Maybe<Committed>;
  /** Copies a board's last commit into the log if it is not there yet (the board actor's syncLog). */
  syncLog(boardId: string): Promise<void>;
  /** When a read happens: a snapshot's and a resuming subscriber's direct shouts are delivered then. */
  clock: () => number;
  /** Waits out a hole in the log (replay.ts); a timer unless given. */
  pause?: (ms: number) => Promise<void>;
}

/** Where a subscription starts: it has had every event up to `seq`. `resync`: what followed its `since` has left the log. */
export interface StartPoint {
  seq: number;
  /** The board's committed seq when the subscription started. */
  head: number;
  resync: boolean;
}

/** Shouts a resuming subscriber is sent at most. */
const MISSED_SHOUTS = 500;

export class BoardFeed {
  private readonly log: ReplayPorts;

  constructor(private readonly deps: BoardFeedDeps) {
    this.log = {
      events: deps.store.events,
      syncLog: (boardId) => deps.syncLog(boardId),
      ...(deps.pause && { pause: deps.pause }),
    };
  }

  /** The board as last committed, to snapshot: read before the log is synced, so the log then holds every event up to its seq. */
  board(boardId: string): Maybe<Committed> {
    return this.deps.readBoard(boardId);
  }

  /** The snapshot of `committed` (from board()) as `reader` sees it; a subscription from it starts at its seq. */
  async snapshot(
    boardId: string,
    committed: Committed,
    reader: Reader,
    want: { recent: number; shouts: boolean },
  ): Promise<Snapshot> {
    await this.deps.syncLog(boardId);
    return snapshotOf(this.deps.store, boardId, committed, reader, { ...want, now: this.deps.clock() });
  }

  /**
   * Where a subscription after `since` starts: there; at the board's head when it names no seq or
   * one past the head; at the head with `resync` when the log no longer holds what followed it.
   * The head is the committed seq, or that of `at` (from board(): what the subscription's view was
   * made of starts it, as a snapshot's board does).
   */
  async startAfter(boardId: string, since: number | undefined, at?: Committed): Promise<StartPoint> {
    await this.deps.syncLog(boardId);
    const { boards, events } = this.deps.store;
    const head = at ? at.record.lastSeq : ((await boards.select({ _id: boardId }, ['lastSeq']))[0]?.lastSeq ?? 0);
    const [first] = await events.select({ boardId }, ['seq'], { sort: [['seq', 1]], limit: 1 });
    const oldest = first?.seq ?? head + 1;
    if (since === undefined || since > head) return { seq: head, head, resync: false };
    if (since + 1 < oldest) return { seq: head, head, resync: true };
    return { seq: since, head, resync: false };
  }

  /** Every event after `from` to `take`, in seq order, once each, no hole skipped (replay.ts). */
  replay(
    boardId: string,
    from: number,
    take: (event: EventRecord) => Maybe<boolean>,
    wanted: () => boolean,
  ): Promise<ReplayEnd> {
    return replay(this.log, boardId, from, take, wanted);
  }

  /** The log after `after` a page at a time as stored, holes and all (the taker fills them through replay). */
  pagesAfter(boardId: string, after: number): AsyncGenerator<EventRecord[]> {
    return pagesAfter(this.log, boardId, after);
  }

  /** The shouts posted after the shout `after` that the reader hears, oldest first (shouts are not in the event log). */
  async shoutsAfter(boardId: string, reader: Reader, after: string): Promise<ShoutRecord[]> {
    if (!after.startsWith(`${boardId}:`)) return [];
    const now = this.deps.clock();
    return readShouts(this.deps.store, boardId, reader.view, { since: after, limit: MISSED_SHOUTS }, now);
  }
}
