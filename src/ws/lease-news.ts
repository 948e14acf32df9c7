// A lease holder hears its own lease's warning (`lease.expiring`, seq null) and its end on each
// socket it has open, whatever it watches, exactly once. Both come as notices to every node
// (src/board/notices.ts), so a holder's socket hears them on a node that reads nothing else of the
// board. An end a socket's subscription carries is left to it, and owed by it until it sends it:
// it goes out by the notice's frame if the subscription starts after it or ends before sending it.
import type { CommittedEvent } from '../../actors/board-actor.js';
import { eventFor } from '../board/feed/look.js';
import type { LeaseEndedNotice, LeaseExpiringNotice } from '../board/notices.js';
import type { AccessChecks } from './access-checks.js';
import { transmit, type Connection } from './connection.js';
import type { EventFrames } from './frames.js';
import type { EndedSubscription, Subscription, Subscriptions } from './subscriptions.js';
import type { BoardStreams } from './board-stream.js';
import { carriesLeaseEnds } from './topics.js';

export interface LeaseNewsDeps {
  subscriptions: Pick<Subscriptions, 'of' | 'watchersOf' | 'endedSubscription'>;
  streams: Pick<BoardStreams, 'lastSeqOf'>;
  access: Pick<AccessChecks, 'carryingLeaseEnds'>;
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
  constructor(private readonly deps: LeaseNewsDeps) {}

  /** A lease with 20% left: its holder is told on every socket. */
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
    for (const conn of this.deps.subscriptions.of(notice.holder) ?? []) transmit(conn, message);
  }

  /** A commit's lease endings to their holders' sockets whose subscription to the board does not carry them. */
  ended({ boardId, events }: LeaseEndedNotice): void {
    const { subscriptions, access, frames } = this.deps;
    for (const e of events) {
      const holder = (e.data as { lease?: { holder?: string } }).lease?.holder;
      for (const conn of (holder !== undefined && subscriptions.of(holder)) || []) {
        const sub = subscriptions.watchersOf(boardId)?.get(conn);
        if (sub && sends(sub, e)) {
          this.leaveTo(boardId, sub, e);
          continue;
        }
        // Its batch came before this notice, to a subscription the socket has ended since.
        const ended = subscriptions.endedSubscription(conn, boardId);
        if (ended && e.seq <= ended.lastSeq && sends(ended, e)) continue;
        // A subscribe under way that will carry it: the subscription it makes settles it (AccessChecks.endProbe).
        const probe = sub ? undefined : access.carryingLeaseEnds(conn, boardId);
        if (probe) (probe.heldBack ??= []).push({ seq: e.seq, frame: frames.of(boardId, e) });
        else transmit(conn, frames.of(boardId, e));
      }
    }
  }

  /** An end the subscription sends: nothing more if it has, else owed by it until it does (Subscription.owedEnds). */
  private leaveTo(boardId: string, sub: Subscription, e: CommittedEvent): void {
    const sent = sub.lastSeq < 0 ? -1 : this.deps.streams.lastSeqOf(boardId, sub);
    if (e.seq <= sent) return;
    const owed = (sub.owedEnds ?? []).filter((o) => o.seq > sent); // those sent since go
    owed.push({ seq: e.seq, frame: this.deps.frames.of(boardId, e) });
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
