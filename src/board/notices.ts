// What a board tells every node's sockets besides its committed events: shouts, heartbeats and
// lease warnings are pushed as they happen and are not in the log.

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
