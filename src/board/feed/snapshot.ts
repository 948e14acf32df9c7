// A board as one reader may see it at its committed seq: the items of its view, the newest events
// up to that seq and the newest shouts, for a subscription that starts from the board as it stands.
import type { Committed } from '../../../actors/board-actor.js';
import type { BoardItem } from '../../../machines/board.js';
import type { EventRecord, ShoutRecord, Store } from '../../../store/ports/store.js';
import { readLog } from '../log-reads.js';
import { readShouts } from '../shouts.js';
import { seesItem } from '../visibility.js';
import type { Reader } from './look.js';

export interface Snapshot {
  /** The seq the board stood at: the subscription goes on from the next event. */
  seq: number;
  /** The items the reader may see, in work-id order, and how many. */
  items: Iterable<BoardItem>;
  total: number;
  /** The newest events up to `seq`, newest first, and the newest shouts (when asked for), as the reader sees them. */
  recent: EventRecord[];
  shouts: ShoutRecord[];
}

/** The snapshot of `committed`; the log must already hold every event up to its seq (BoardFeed.snapshot syncs it). */
export async function snapshotOf(
  store: Pick<Store, 'events' | 'shouts'>,
  boardId: string,
  committed: Committed,
  reader: Reader,
  want: { recent: number; shouts: boolean; now: number },
): Promise<Snapshot> {
  const { board, record } = committed;
  const seq = record.lastSeq;
  const { view } = reader;
  const [{ events: recent }, shouts] = await Promise.all([
    readLog(store, boardId, view, { before: seq + 1, limit: want.recent }),
    want.shouts
      ? readShouts(store, boardId, view, { newest: true, limit: want.recent }, want.now)
      : Promise.resolve([]),
  ]);
  // A whole view's items are read from the board as it holds them (a committed board never changes), not copied.
  const some = view.items === null ? null : [...board.items.values()].filter((item) => seesItem(view, item.workId));
  const items = some ?? { [Symbol.iterator]: () => board.items.values() };
  return { seq, items, total: some?.length ?? board.items.size, recent, shouts };
}
