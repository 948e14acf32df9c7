// What a board tells every node's sockets besides its committed events: shouts, heartbeats and
// lease warnings are pushed as they happen and are not in the log. A lease's end is in the log, and
// is told to every node besides: its holder's sockets hear it wherever they are, and a node receives
// a board's committed events only where the board is homed or watched (src/bus/redis.ts, `hear`).
import type { CommittedEvent } from '../../store/ports/store.js';

/** A shout was posted: push it to the board's subscribers that may see it. */
export type ShoutNotice = {
  kind: 'shout';
  boardId: string;
  shout: { id: string; from: string; text: string; kind: string; workId: string | null; to: string | null; at: number };
};

/** An agent sent a heartbeat: push its presence to the board's watchers of the roster (not logged, like a lease warning). */
export type PresenceNotice = {
  kind: 'presence';
  boardId: string;
  presence: { principal: string; status: string; note: string; workId: string | null; seenAt: number };
};

/** A lease has 20% left: tell its holder. */
export type LeaseExpiringNotice = {
  kind: 'lease.expiring';
  boardId: string;
  workId: string;
  holder: string;
  expiresAt: number;
};

/** Leases ended (expired or revoked) by one commit: tell their holders, whatever they watch. */
export type LeaseEndedNotice = {
  kind: 'lease.ended';
  boardId: string;
  /** The commit's lease.expired and lease.revoked events, as committed. */
  events: CommittedEvent[];
};

/** The events of a batch that end a lease its holder is told of. */
export function leaseEnds(events: readonly CommittedEvent[]): CommittedEvent[] {
  return events.filter((e) => e.type === 'lease.expired' || e.type === 'lease.revoked');
}
