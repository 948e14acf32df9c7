// A board's event log read forward for a subscriber, from a seq: a page at a time, in seq order,
// each event once and none skipped. A hole in the log is waited out, within a bound.
import type { Maybe } from '../../../store/ports/maybe.js';
import type { EventRecord, Store } from '../../../store/ports/store.js';

/** Events read from the log at once. */
export const REPLAY_PAGE = 500;
/** A hole in the log is waited out this many times, this long each, before the replay gives up on it. */
export const LOG_GAP_WAITS = 40;
export const LOG_GAP_WAIT_MS = 50;

export interface ReplayPorts {
  events: Pick<Store['events'], 'find'>;
  /** Copies the board's last commit into the log if it is not there yet (the board actor's syncLog). */
  syncLog(boardId: string): Promise<void>;
  /** Waits `ms` (a test passes its own clock). */
  pause?: (ms: number) => Promise<void>;
}

/** How a replay ended: it reached the end of the log, its taker stopped it, or a hole outlasted LOG_GAP_WAITS. */
export type ReplayEnd = 'done' | 'stopped' | 'incomplete';

const pauseFor = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The log after `after` as stored, a page at a time (holes and all), until it holds no more. */
export async function* pagesAfter(ports: Pick<ReplayPorts, 'events'>, boardId: string, after: number) {
  for (;;) {
    const page = await logPage(ports, boardId, after);
    yield page;
    if (page.length < REPLAY_PAGE) return;
    after = page.at(-1)!.seq;
  }
}

/**
 * Hands `take` every event after `from` in seq order, each once, at the pace it takes them (it
 * answers false to stop, a promise while it waits for its reader); `wanted` is asked before each page. An event the log does not hold yet
 * while it holds a later one is never skipped: the replay waits for the log to fill (untilLogFills).
 */
export async function replay(
  ports: ReplayPorts,
  boardId: string,
  from: number,
  take: (event: EventRecord) => Maybe<boolean>,
  wanted: () => boolean,
): Promise<ReplayEnd> {
  for (let after = from, waits = 0; ;) {
    if (!wanted()) return 'stopped';
    const page = await logPage(ports, boardId, after);
    const run = contiguousRun(page, after);
    for (const event of run) {
      const taken = take(event); // awaited only when the taker waits (the client reading)
      if (!(typeof taken === 'boolean' ? taken : await taken)) return 'stopped';
      after = event.seq;
    }
    if (run.length < page.length) {
      if (!(await untilLogFills(ports, boardId, ++waits))) return 'incomplete';
      continue;
    }
    if (page.length < REPLAY_PAGE) return 'done';
  }
}

/**
 * The log lacks the next event while it holds a later one: the commit that made it is still being
 * copied to the log (by this node or another; the event-log port has nothing to await). The board
 * copies its last commit first, then the replay pauses before it reads again: LOG_GAP_WAITS times at
 * most per replay, so about two seconds, after which it gives up (false).
 */
async function untilLogFills(ports: ReplayPorts, boardId: string, waits: number): Promise<boolean> {
  if (waits > LOG_GAP_WAITS) return false;
  await ports.syncLog(boardId);
  await (ports.pause ?? pauseFor)(LOG_GAP_WAIT_MS);
  return true;
}

const logPage = (ports: Pick<ReplayPorts, 'events'>, boardId: string, after: number): Promise<EventRecord[]> =>
  ports.events.find({ boardId, seq: { $gt: after } }, { sort: [['seq', 1]], limit: REPLAY_PAGE });

/** The page's events that follow `after` without a hole. */
function contiguousRun(page: EventRecord[], after: number): EventRecord[] {
  const hole = page.findIndex((e, i) => e.seq !== after + 1 + i);
  return hole < 0 ? page : page.slice(0, hole);
}
