// Shouts on a board: posting (then trimming to what the plan keeps: its history retention, and the
// newest SHOUTS_KEPT_PER_BOARD, give or take a trim's spacing), reading what a principal may see
// of them (src/board/visibility.ts decides that), and a direct shout's delivery receipt.
import { randomBytes } from 'node:crypto';
import { historySince, type PlanName } from '../plans.js';
import type { ShoutRecord, Store } from '../../store/ports/store.js';
import { seesShout, type BoardView } from './visibility.js';

export const SHOUTS_KEPT_PER_BOARD = 5000;

export type ShoutPorts = Pick<Store, 'shouts'>;
export type NewShout = Pick<ShoutRecord, 'from' | 'text' | 'kind' | 'workId' | 'to'>;

/**
 * Stores a shout (ids sort in posting order) and, when `trim` says so, trims the board's shouts to
 * what its plan keeps: its history retention and the newest SHOUTS_KEPT_PER_BOARD. Trimming walks
 * the board's shouts and even an empty range costs a cursor, so ShoutTrims spaces it out; the
 * retention sweep (src/board/retention.ts) drops what is past the retention meanwhile.
 */
export async function postShout(
  store: ShoutPorts,
  boardId: string,
  plan: PlanName,
  shout: NewShout,
  now: number,
  trim = true,
): Promise<ShoutRecord> {
  const id = `${boardId}:${now.toString(36).padStart(10, '0')}:${randomBytes(4).toString('hex')}`;
  const record: ShoutRecord = { _id: id, version: 1, boardId, ...shout, at: now, deliveredAt: null };
  await store.shouts.insert(record);
  if (trim) await trimShouts(store, boardId, plan, now);
  return record;
}

/** Deletes the board's shouts older than the plan's history retention, then all but the newest `keep`; says how many went. */
export async function trimShouts(
  store: ShoutPorts,
  boardId: string,
  plan: PlanName,
  now: number,
  keep = SHOUTS_KEPT_PER_BOARD,
): Promise<number> {
  const expired = await store.shouts.deleteMany({ boardId, at: { $lt: historySince(plan, now) } });
  return expired + (await dropExcess(store, boardId, keep));
}

/** All but the newest `keep` of the board's shouts: one count, then the oldest in the (boardId, at) index's order. */
async function dropExcess(store: ShoutPorts, boardId: string, keep: number): Promise<number> {
  const excess = (await store.shouts.count({ boardId })) - keep;
  if (excess <= 0) return 0;
  const oldest = await store.shouts.select({ boardId }, ['at'], {
    sort: [
      ['at', 1],
      ['_id', 1],
    ],
    limit: excess,
  });
  return store.shouts.deleteMany({ _id: { $in: oldest.map((s) => s._id) } });
}

/** Posts a node makes on a board from one trim of its shouts to the next. */
export const SHOUT_TRIM_EVERY = 100;
/** Boards whose posts ShoutTrims follows at once; past it, it starts over (each board is then trimmed on its next post). */
const FOLLOWED_BOARDS = 10_000;

/**
 * When a post on this node should trim its board's shouts: on its first post here, then on every
 * SHOUT_TRIM_EVERY-th. A board then holds at most SHOUTS_KEPT_PER_BOARD shouts plus, for each node
 * posting to it, SHOUT_TRIM_EVERY − 1, and a post costs the same on a full board as on an empty one.
 */
export class ShoutTrims {
  private readonly sinceTrim = new Map<string, number>();

  due(boardId: string): boolean {
    const posts = this.sinceTrim.get(boardId);
    if (posts === undefined && this.sinceTrim.size >= FOLLOWED_BOARDS) this.sinceTrim.clear();
    const due = posts === undefined || posts + 1 >= SHOUT_TRIM_EVERY;
    this.sinceTrim.set(boardId, due ? 0 : posts + 1);
    return due;
  }
}

/** A shout as readers get it (REST and socket): times as ISO strings. */
export const shoutView = (
  s: Pick<ShoutRecord, '_id' | 'from' | 'text' | 'kind' | 'workId' | 'to' | 'at'> & { deliveredAt?: number | null },
) => ({
  id: s._id,
  from: s.from,
  text: s.text,
  kind: s.kind,
  workId: s.workId,
  to: s.to,
  at: new Date(s.at).toISOString(),
  deliveredAt: s.deliveredAt === null || s.deliveredAt === undefined ? null : new Date(s.deliveredAt).toISOString(),
});

export interface ShoutPage {
  /** Shouts after this id, oldest first. */
  since?: string;
  /** Shouts before this id, newest first (a feed scrolled back). */
  before?: string;
  /** Without since: the newest shouts, newest first. */
  newest?: boolean;
  workId?: string;
  limit: number;
}

/**
 * Up to `limit` shouts the reader may see, about `workId` when given: after the id `since` oldest
 * first, or (with `before` or `newest`) the newest before that id, newest first. Those addressed to
 * the reader are marked delivered at `now`.
 */
export async function readShouts(
  store: ShoutPorts,
  boardId: string,
  reader: BoardView,
  page: ShoutPage,
  now: number,
): Promise<ShoutRecord[]> {
  const back = page.since === undefined && (page.before !== undefined || page.newest === true);
  const shouts: ShoutRecord[] = [];
  // What the reader may not see (direct shouts of others, shouts about others' items) is skipped, so read in pages until the answer is full.
  for (let cursor = back ? page.before : page.since; shouts.length < page.limit;) {
    const range = cursor === undefined ? {} : { _id: back ? { $lt: cursor } : { $gt: cursor } };
    const found = await store.shouts.find(
      { boardId, ...range, ...(page.workId ? { workId: page.workId } : {}) },
      { sort: [['_id', back ? -1 : 1]], limit: page.limit },
    );
    shouts.push(...found.filter((s) => seesShout(reader, s)));
    if (found.length < page.limit) break;
    cursor = found.at(-1)!._id;
  }
  const answer = shouts.slice(0, page.limit);
  for (const s of answer) {
    if (s.to === reader.principal && s.deliveredAt === null) {
      s.deliveredAt = now;
      await store.shouts.update(s._id, s.version, { deliveredAt: now });
    }
  }
  return answer;
}
