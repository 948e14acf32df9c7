// A lease holder hears its own lease's warning (`lease.expiring`, seq null) and its end on each
// socket it has open, whatever it watches, exactly once, while that socket may still see the board
// and as it may see it (the one rule: AccessChecks.readerOn, src/board/visibility.ts): a member
// removed meanwhile hears nothing more of the board, and a token that may not read the item hears
// its lease without the item's patch. Both come as notices to every node (src/board/notices.ts),
// so a holder's socket hears them on a node that reads nothing else of the board. An end a
// socket's subscription carries is left to it, and owed by it until it sends it: it goes out by
// the notice's frame if the subscription starts after it or ends before sending it.
import type { CommittedEvent } from '../../actors/board-actor.js';
import { eventFor, type Reader } from '../board/feed/look.js';
import type { LeaseEndedNotice, LeaseExpiringNotice } from '../board/notices.js';
import { andThen, type Maybe } from '../../store/ports/maybe.js';
import type { AccessChecks } from './access-checks.js';
import { transmit, type Connection } from './connection.js';
import type { EventFrames } from './frames.js';
import type { EndedSubscription, Subscription, Subscriptions } from './subscriptions.js';
import type { BoardStreams } from './board-stream.js';
import { carriesLeaseEnds } from './topics.js';

export interface LeaseNewsDeps {
  subscriptions: Pick<Subscriptions, 'of' | 'watchersOf' | 'endedSubscription' | 'isOpen'>;
  streams: Pick<BoardStreams, 'lastSeqOf'>;
  access: Pick<AccessChecks, 'carryingLeaseEnds' | 'readerOn'>;
  frames: EventFrames;
  clock: () => number;
}

/**
 * Whether the subscription sends the socket this end itself: its topics carry lease ends, they did
 * when the end came, and its view sees the item.
 */
const sends = (sub: EndedSubscription, e: CommittedEvent): boolean =>
  carriesLeaseEnds(sub.topics) && e.seq > (sub.leaseEndsAfter ?? 0) && eventFor(sub, e) !== null;

export class LeaseNews {
  /**
   * Per socket, its news still waiting for a read of what it may see: what comes after waits its
   * turn, so a socket hears its holder's news in the order it came.
   */
  private readonly turns = new WeakMap<Connection, Promise<void>>();

  constructor(private readonly deps: LeaseNewsDeps) {}

  /** A lease with 20% left: its holder is told on every socket that still reaches the board (it carries the lease alone). */
  expiring(notice: LeaseExpiringNotice): void {
    const message = JSON.stringify({
      type: 'event',
      boardId: notice.boardId,
      seq: null,
      event: {
        type: 'lease.expiring',
        actor: 'system:lease-scheduler',
        workId: notice.workId,
        at: new Date(this.deps.clock()).toISOString(),
        data: { holder: notice.holder, expiresAt: new Date(notice.expiresAt).toISOString() },
      },
    });
    for (const conn of this.deps.subscriptions.of(notice.holder) ?? [])
      this.inTurn(conn, () =>
        andThen(this.readerOf(conn, notice.boardId), (reader) => {
          if (reader && this.deps.subscriptions.isOpen(conn)) transmit(conn, message);
        }),
      );
  }

  /** A commit's lease endings to their holders' sockets whose subscription to the board does not carry them. */
  ended({ boardId, events }: LeaseEndedNotice): void {
    for (const e of events) {
      const holder = (e.data as { lease?: { holder?: string } }).lease?.holder;
      for (const conn of (holder !== undefined && this.deps.subscriptions.of(holder)) || [])
        this.tell(conn, boardId, [e]);
    }
  }

  /** Lease endings of the board to one of their holder's sockets, in their turn (also those a subscribe held back: AccessChecks.endProbe). */
  tell(conn: Connection, boardId: string, events: readonly CommittedEvent[]): void {
    for (const e of events) this.inTurn(conn, () => this.tellOne(conn, boardId, e));
  }

  /**
   * One end to one socket: left to its subscription if that carries it, nothing if a subscription
   * since ended sent it, held back by a subscribe under way that will carry it, else sent as the
   * socket may see it (`reader`, read first when it watches nothing of the board).
   */
  private tellOne(conn: Connection, boardId: string, e: CommittedEvent, reader?: Reader | null): Maybe<void> {
    const { subscriptions, access } = this.deps;
    const sub = subscriptions.watchersOf(boardId)?.get(conn);
    if (sub && sends(sub, e)) return this.leaveTo(boardId, sub, e);
    // Its batch came before this notice, to a subscription the socket has ended since.
    const ended = subscriptions.endedSubscription(conn, boardId);
    if (ended && e.seq <= ended.lastSeq && sends(ended, e)) return;
    // A subscribe under way that will carry it: the subscription it makes settles it (AccessChecks.endProbe).
    const probe = sub ? undefined : access.carryingLeaseEnds(conn, boardId);
    if (probe) {
      (probe.heldBack ??= []).push(e);
      return;
    }
    const seen = sub ?? reader;
    // What the socket may see is read first; then the rest is asked again (a subscription may have come meanwhile).
    if (seen === undefined)
      return andThen(access.readerOn(conn, boardId), (read) => this.tellOne(conn, boardId, e, read));
    if (seen && subscriptions.isOpen(conn)) {
      const frame = this.frameAsSeen(boardId, seen, e);
      if (frame) transmit(conn, frame);
    }
  }

  /** What the socket may see of the board: its subscription's view, else read (null: it no longer reaches the board). */
  private readerOf(conn: Connection, boardId: string): Maybe<Reader | null> {
    return this.deps.subscriptions.watchersOf(boardId)?.get(conn) ?? this.deps.access.readerOn(conn, boardId);
  }

  /** The event's frame as the reader sees it (the one frame of the event when it sees it whole); null when it sees nothing of it. */
  private frameAsSeen(boardId: string, reader: Reader, e: CommittedEvent): Uint8Array | null {
    const seen = eventFor(reader, e);
    if (!seen) return null;
    return seen === e ? this.deps.frames.of(boardId, e) : this.deps.frames.fresh(boardId, seen);
  }

  /** Runs the socket's next step of news after those before it; a read that fails tells it nothing of that one. */
  private inTurn(conn: Connection, step: () => Maybe<void>): void {
    const before = this.turns.get(conn);
    const done = before ? before.then(step) : step();
    if (!(done instanceof Promise)) return;
    const turn = done.catch(() => undefined);
    this.turns.set(conn, turn);
    void turn.then(() => {
      if (this.turns.get(conn) === turn) this.turns.delete(conn);
    });
  }

  /** An end the subscription sends: nothing more if it has, else owed by it until it does (Subscription.owedEnds). */
  private leaveTo(boardId: string, sub: Subscription, e: CommittedEvent): void {
    const sent = sub.lastSeq < 0 ? -1 : this.deps.streams.lastSeqOf(boardId, sub);
    if (e.seq <= sent) return;
    const owed = (sub.owedEnds ?? []).filter((o) => o.seq > sent); // those sent since go
    owed.push({ seq: e.seq, frame: this.frameAsSeen(boardId, sub, e)! }); // sends(): it sees it
    sub.owedEnds = owed;
  }
}

/**
 * A subscription starting after `seq` (Subscribe.startFrom): ends at or before it are not its to
 * send, and those the notice left to it go out now.
 */
export function startedAfter(conn: Connection, sub: Subscription, seq: number): void {
  sub.leaseEndsAfter = Math.max(sub.leaseEndsAfter ?? 0, seq);
  if (!sub.owedEnds) return;
  for (const owed of sub.owedEnds) if (owed.seq <= seq) transmit(conn, owed.frame);
  sub.owedEnds = sub.owedEnds.filter((o) => o.seq > seq);
}
