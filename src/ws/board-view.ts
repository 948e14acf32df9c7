// What a page watching a board reads over its socket besides the event stream, so keeping up never
// costs a REST request: the board as it stands at a seq (its cards in pages, with the newest events
// and shouts), the shouts a resuming socket missed, and the roster with each heartbeat.
import type { Committed } from '../../actors/board-actor.js';
import { publicCard } from '../../machines/item-view.js';
import { ONLINE_WITHIN_MS, presenceView, seenOn, type PresenceView } from '../board/presence.js';
import { readShouts, shoutView } from '../board/shouts.js';
import { readLog } from '../board/log-reads.js';
import { seesItem, type BoardView } from '../board/visibility.js';
import type { EventRecord, Store } from '../../store/ports/store.js';
import { SNAPSHOT } from './protocol.js';

export type ViewPorts = Pick<Store, 'events' | 'shouts' | 'presence'>;

/** An event as the socket and GET /api/activity carry it. */
export const eventView = (e: Pick<EventRecord, 'seq' | 'type' | 'actor' | 'workId' | 'at' | 'data'>) => ({
  seq: e.seq,
  type: e.type,
  actor: e.actor,
  workId: e.workId,
  at: new Date(e.at).toISOString(),
  data: e.data,
});

export interface SnapshotInput {
  boardId: string;
  name: string;
  committed: Committed;
  /** What the subscriber may see: the snapshot holds only that. */
  view: BoardView;
  /** Whether the subscription takes shouts (the last page then carries the newest ones). */
  shouts: boolean;
  now: number;
}

/**
 * The `snapshot` messages of a board at its committed seq: its cards SNAPSHOT.pageSize at a time
 * in work-id order, the last page with the newest events (up to that seq) and shouts. The log must
 * already hold every event up to the seq (the caller syncs it first).
 */
export async function snapshotMessages(
  store: ViewPorts,
  input: SnapshotInput,
): Promise<{ seq: number; messages: Iterable<string> }> {
  const { board, record } = input.committed;
  const seq = record.lastSeq;
  const { view } = input;
  const [{ events: recent }, shouts] = await Promise.all([
    readLog(store, input.boardId, view, { before: seq + 1, limit: SNAPSHOT.recent }),
    input.shouts
      ? readShouts(store, input.boardId, view, { newest: true, limit: SNAPSHOT.recent }, input.now)
      : Promise.resolve([]),
  ]);
  const some = view.items === null ? null : [...board.items.values()].filter((item) => seesItem(view, item.workId));
  const total = some?.length ?? board.items.size;
  const parts = Math.max(1, Math.ceil(total / SNAPSHOT.pageSize));
  function* messages(): Generator<string> {
    let page: ReturnType<typeof publicCard>[] = [];
    let part = 0;
    const message = (last: boolean) => {
      const tail = last
        ? { recent: recent.map(eventView), ...(input.shouts ? { shouts: shouts.map(shoutView) } : {}) }
        : {};
      return JSON.stringify({
        type: 'snapshot',
        boardId: input.boardId,
        seq,
        name: input.name,
        total,
        part: part++,
        last,
        items: page,
        ...tail,
      });
    };
    for (const item of some ?? board.items.values()) {
      page.push(publicCard(item));
      if (page.length === SNAPSHOT.pageSize && part < parts - 1) {
        yield message(false);
        page = [];
      }
    }
    yield message(true);
  }
  return { seq, messages: messages() };
}

/** The `roster` message: every agent seen on the board, most recently first. */
export async function rosterMessage(store: ViewPorts, boardId: string): Promise<string> {
  const agents = (await seenOn(store, boardId)).map(presenceView);
  return JSON.stringify({ type: 'roster', boardId, agents, onlineWithinMs: ONLINE_WITHIN_MS });
}

export const presenceMessage = (boardId: string, agent: PresenceView): string =>
  JSON.stringify({ type: 'presence', boardId, agent });

/** The shouts posted after `after` that the reader may see, oldest first, as `shout` messages. */
export async function missedShouts(
  store: ViewPorts,
  boardId: string,
  reader: BoardView,
  after: string,
  now: number,
): Promise<string[]> {
  if (!after.startsWith(`${boardId}:`)) return [];
  const shouts = await readShouts(store, boardId, reader, { since: after, limit: 500 }, now);
  return shouts.map((s) => JSON.stringify({ type: 'shout', boardId, shout: shoutView(s) }));
}
