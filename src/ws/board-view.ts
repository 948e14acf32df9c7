// What a page watching a board reads over its socket besides the event stream, so keeping up never
// costs a REST request: the board as it stands at a seq (its cards in pages, with the newest events
// and shouts), the shouts a resuming socket missed, and the roster with each heartbeat. What is in
// them is read by the board's feed (src/board/feed/); here they become messages. Agents (and people)
// in them are named as the reader may see them (names.ts): `name` on a roster entry, `actorName` on
// an event.
import { publicCard } from '../../machines/item-view.js';
import { ONLINE_WITHIN_MS, presenceView, seenOn, type PresenceView } from '../board/presence.js';
import { shoutView } from '../board/shouts.js';
import { agentAsSeen, type BoardView } from '../board/visibility.js';
import type { Snapshot } from '../board/feed/snapshot.js';
import type { EventRecord, ShoutRecord, Store } from '../../store/ports/store.js';
import { SNAPSHOT } from './protocol.js';

/** An event as the socket and GET /api/activity carry it. */
export const eventView = (e: Pick<EventRecord, 'seq' | 'type' | 'actor' | 'workId' | 'at' | 'data'>) => ({
  seq: e.seq,
  type: e.type,
  actor: e.actor,
  workId: e.workId,
  at: new Date(e.at).toISOString(),
  data: e.data,
});

/** An event with its actor's name when the reader is told it (`actorName`, as live event frames carry it). */
const namedEventView = (e: EventRecord, actorName: string | undefined) =>
  actorName === undefined ? eventView(e) : { ...eventView(e), actorName };

/**
 * The `snapshot` messages of a board's snapshot: its cards in work-id order, then the newest events
 * (their actors named by `names`) and, when the subscription takes shouts, the newest shouts. A
 * page holds at most SNAPSHOT.pageSize cards and, past its first entry, SNAPSHOT.pageBytes: one
 * message over the socket's backlog cap could never be sent (it would close the socket 4008 on
 * every try), and cards, events and shouts within the documented limits can make one. So `recent`
 * and `shouts` go on the last pages, as many to a page as fit; the client joins them in order.
 */
export function* snapshotMessages(
  boardId: string,
  name: string,
  snapshot: Snapshot,
  shouts: boolean,
  names: ReadonlyMap<string, string> = new Map(),
): Generator<string> {
  const { seq, total } = snapshot;
  const entries = function* (): Generator<[keyof Page, string]> {
    for (const item of snapshot.items) yield ['items', JSON.stringify(publicCard(item))];
    for (const e of snapshot.recent) yield ['recent', JSON.stringify(namedEventView(e, names.get(e.actor)))];
    if (shouts) for (const shout of snapshot.shouts) yield ['shouts', JSON.stringify(shoutView(shout))];
  };
  let part = 0;
  let page = emptyPage();
  let bytes = 0;
  const message = (last: boolean) => {
    const head = JSON.stringify({ type: 'snapshot', boardId, seq, name, total, part: part++, last });
    // The last page names `recent` (and `shouts`, when taken) even when empty, as it always has.
    const list = (key: keyof Page, always: boolean) =>
      always || page[key].length > 0 ? `,"${key}":[${page[key].join(',')}]` : '';
    return `${head.slice(0, -1)}${list('items', true)}${list('recent', last)}${list('shouts', last && shouts)}}`;
  };
  for (const [key, json] of entries()) {
    const size = Buffer.byteLength(json) + 1;
    const full = key === 'items' && page.items.length === SNAPSHOT.pageSize;
    if (full || (bytes > 0 && bytes + size > SNAPSHOT.pageBytes)) {
      yield message(false);
      page = emptyPage();
      bytes = 0;
    }
    page[key].push(json);
    bytes += size;
  }
  yield message(true);
}

/** One `snapshot` message's entries, each already JSON. */
interface Page {
  items: string[];
  recent: string[];
  shouts: string[];
}

const emptyPage = (): Page => ({ items: [], recent: [], shouts: [] });

/**
 * The `roster` message: every agent seen on the board, most recently first, as `view` sees it
 * (agentAsSeen, by the items each holds: `holds`), each named as `named` tells the reader.
 */
export async function rosterMessage(
  store: Pick<Store, 'presence'>,
  boardId: string,
  view: BoardView,
  named: (principals: string[]) => Promise<ReadonlyMap<string, string>>,
  holds: (principal: string) => readonly string[],
): Promise<string> {
  const seen = await seenOn(store, boardId);
  const names = await named(seen.map((p) => p.principal));
  const agents = seen.map((p) =>
    withName(agentAsSeen(view, presenceView(p), holds(p.principal)), names.get(p.principal)),
  );
  return JSON.stringify({ type: 'roster', boardId, agents, onlineWithinMs: ONLINE_WITHIN_MS });
}

/** One heartbeat to a board's roster sockets, the agent named when known. */
export const presenceMessage = (boardId: string, agent: PresenceView, name?: string): string =>
  JSON.stringify({ type: 'presence', boardId, agent: withName(agent, name) });

const withName = (agent: PresenceView, name: string | undefined) => (name === undefined ? agent : { ...agent, name });

/** A shout a resuming socket missed, as a `shout` message. */
export const shoutMessage = (boardId: string, shout: ShoutRecord): string =>
  JSON.stringify({ type: 'shout', boardId, shout: shoutView(shout) });
