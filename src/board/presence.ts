// Presence on a board: a heartbeat records an agent's status, note and item; an agent is online
// when seen within ONLINE_WITHIN_MS; the roster joins what was seen with the leases agents hold.
import type { Board } from '../../machines/board.js';
import { liveLeases } from '../../machines/board-queries.js';
import type { PresenceRecord, Store } from '../../store/ports/store.js';
import type { Maybe } from '../../store/ports/maybe.js';
import type { PresenceNotice } from './notices.js';

export const ONLINE_WITHIN_MS = 120_000;
/** Presence rows read for one roster, most recently seen first. */
export const ROSTER_MAX = 1000;

export type PresencePorts = Pick<Store, 'presence'>;
export type Heartbeat = Pick<PresenceRecord, 'status' | 'note' | 'workId'>;

export interface RosterEntry {
  principal: string;
  status: PresenceRecord['status'] | null;
  note: string | null;
  workId: string | null;
  /** Null for an agent holding a lease that never sent a heartbeat. */
  lastSeenAt: string | null;
  online: boolean;
  leases: string[];
}

export const isOnline = (seenAt: number, now: number): boolean => now - seenAt < ONLINE_WITHIN_MS;

/** One agent's presence as watchers get it over the socket (the roster and each heartbeat); leases and online they work out themselves. */
export interface PresenceView {
  principal: string;
  status: string;
  note: string;
  workId: string | null;
  lastSeenAt: string;
}

export const presenceView = (
  p: Pick<PresenceRecord, 'principal' | 'note' | 'workId' | 'seenAt'> & { status: string },
): PresenceView => ({
  principal: p.principal,
  status: p.status,
  note: p.note,
  workId: p.workId,
  lastSeenAt: new Date(p.seenAt).toISOString(),
});

/** Records `principal` as seen at `now` with its heartbeat; the row is one per board and principal. */
export async function recordHeartbeat(
  store: PresencePorts,
  boardId: string,
  principal: string,
  beat: Heartbeat,
  now: number,
): Promise<void> {
  const id = `${boardId}|${principal}`;
  const fields = { ...beat, seenAt: now };
  const existing = await store.presence.get(id);
  if (existing && (await store.presence.update(id, existing.version, fields))) return;
  // First heartbeat, or a concurrent one won the version: insert, else update what is there now.
  await store.presence.insert({ _id: id, version: 1, boardId, principal, ...fields }).catch(async () => {
    const raced = await store.presence.get(id);
    if (raced) await store.presence.update(id, raced.version, fields);
  });
}

/** How many agents sent a heartbeat within ONLINE_WITHIN_MS of `now`. */
export function agentsOnline(store: PresencePorts, boardId: string, now: number): Promise<number> {
  return store.presence.count({ boardId, seenAt: { $gt: now - ONLINE_WITHIN_MS } });
}

/** How long a board's count of agents online is reused on a node without a heartbeat on the board. */
export const ONLINE_COUNT_FRESH_MS = 1000;
/** Boards whose counts a node keeps; past it they are all counted afresh. */
const COUNTED_BOARDS = 10_000;

/**
 * Agents online per board for the status snapshot, counted at most once a second per node, and
 * afresh at once after a heartbeat on the board anywhere (the presence notice, heard()). Only an
 * agent going quiet is seen up to a second late, or a heartbeat on another node while the bus is
 * down.
 */
export class OnlineCounts {
  private readonly counts = new Map<string, { count: number; at: number; beats: number }>();
  private readonly beats = new Map<string, number>();

  constructor(private readonly store: PresencePorts) {}

  /** The count, now when the one kept is fresh. */
  count(boardId: string, now: number): Maybe<number> {
    const beats = this.beats.get(boardId) ?? 0;
    const known = this.counts.get(boardId);
    if (known && known.beats === beats && now >= known.at && now - known.at < ONLINE_COUNT_FRESH_MS) return known.count;
    return this.recount(boardId, now, beats);
  }

  private async recount(boardId: string, now: number, beats: number): Promise<number> {
    const count = await agentsOnline(this.store, boardId, now);
    // A heartbeat heard while the store counted may not be in the count: keep it only if none was.
    if ((this.beats.get(boardId) ?? 0) === beats) {
      if (this.counts.size >= COUNTED_BOARDS) this.counts.clear();
      this.counts.set(boardId, { count, at: now, beats });
    }
    return count;
  }

  /** The notices it hears: heartbeats on any node. */
  readonly hears = { presence: (notice: PresenceNotice) => this.heard(notice.boardId) };

  /** A heartbeat on the board, on any node. */
  heard(boardId: string): void {
    if (this.beats.size >= COUNTED_BOARDS) this.beats.clear();
    this.beats.set(boardId, (this.beats.get(boardId) ?? 0) + 1);
  }
}

/** The board's presence rows, most recently seen first. */
export function seenOn(store: PresencePorts, boardId: string): Promise<PresenceRecord[]> {
  return store.presence.find({ boardId }, { sort: [['seenAt', -1]], limit: ROSTER_MAX });
}

/** The roster: every agent seen (most recently first), then lease holders never seen, each with the items it holds. */
export function rosterOf(seen: readonly PresenceRecord[], board: Board, now: number): RosterEntry[] {
  const leases = new Map<string, string[]>();
  for (const item of liveLeases(board)) {
    const holder = item.life.lease!.holder;
    leases.set(holder, [...(leases.get(holder) ?? []), item.workId]);
  }
  const agents: RosterEntry[] = seen.map((p) => ({
    principal: p.principal,
    status: p.status,
    note: p.note,
    workId: p.workId,
    lastSeenAt: new Date(p.seenAt).toISOString(),
    online: isOnline(p.seenAt, now),
    leases: leases.get(p.principal) ?? [],
  }));
  const listed = new Set(agents.map((a) => a.principal));
  for (const [principal, held] of leases) {
    if (!listed.has(principal))
      agents.push({ principal, status: null, note: null, workId: null, lastSeenAt: null, online: false, leases: held });
  }
  return agents;
}
