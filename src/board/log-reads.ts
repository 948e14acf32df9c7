// Reading a board's event log newest first as one principal may see it (src/board/visibility.ts):
// GET /api/activity, POST /api/history/query and a snapshot's newest events.
import type { EventRecord, Filter, Store } from '../../store/ports/store.js';
import { eventAsSeen, seesWholeBoard, type BoardView } from './visibility.js';

/** Log pages a narrow view reads for one answer at most, so a sparse view's read stays bounded; `nextBefore` goes on from there. */
const PAGES_PER_READ = 8;

export interface LogPage {
  /** Newest first, each as the view may see it. */
  events: EventRecord[];
  /** The seq to pass as `before` for older events; null once the log holds none. */
  nextBefore: number | null;
}

/**
 * Up to `limit` events matching `filter` (besides the board), newest first and older than
 * `before` when given, as the view sees them. A view that misses some reads on until the page
 * is full or PAGES_PER_READ pages were read; a page may then hold fewer than `limit`, and
 * `nextBefore` says where to go on.
 */
export async function readLog(
  store: Pick<Store, 'events'>,
  boardId: string,
  view: BoardView,
  options: { filter?: Filter<EventRecord>; before?: number; limit: number },
): Promise<LogPage> {
  const whole = seesWholeBoard(view);
  const events: EventRecord[] = [];
  let before = options.before;
  for (let pages = 0; pages < (whole ? 1 : PAGES_PER_READ) && events.length < options.limit; pages++) {
    const want = options.limit - events.length;
    const page = await store.events.find(
      { ...options.filter, boardId, ...(before !== undefined && { seq: { $lt: before } }) },
      { sort: [['seq', -1]], limit: want },
    );
    for (const e of page) {
      const seen = eventAsSeen(view, e);
      if (seen) events.push(seen);
    }
    if (page.length < want) return { events, nextBefore: null };
    before = page.at(-1)!.seq;
  }
  return { events, nextBefore: before ?? null };
}
