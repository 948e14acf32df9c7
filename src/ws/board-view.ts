// What a page watching a board reads over its socket besides the event stream, so keeping up never
// costs a REST request: the board as it stands at a seq (its cards in pages, with the newest events
// and shouts), the shouts a resuming socket missed, and the roster with each heartbeat. What is in
// them is read by the board's feed (src/board/feed/); here they become messages. Agents (and people)
// in them are named as the reader may see them (names.ts): `name` on a roster entry, `actorName` on
// an event.
import { publicCard } from '../../machines/item-view.js';
import { ONLINE_WITHIN_MS, presenceView, seenOn, type PresenceView } from '../board/presence.js';
import { shoutView } from '../board/shouts.js';
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
 * The `snapshot` messages of a board's snapshot: its cards SNAPSHOT.pageSize at a time in work-id
 * order, the last page with the newest events (their actors named by `names`) and, when the
 * subscription takes shouts, the newest shouts.
 */
export function* snapshotMessages(
  boardId: string,
  name: string,
  snapshot: Snapshot,
  shouts: boolean,
  names: ReadonlyMap<string, string> = new Map(),
): Generator<string> {
  const { seq, total } = snapshot;
  const parts = Math.max(1, Math.ceil(total / SNAPSHOT.pageSize));
  let page: ReturnType<typeof publicCard>[] = [];
  let part = 0;
  const message = (last: boolean) => {
    const tail = last
      ? {
          recent: snapshot.recent.map((e) => namedEventView(e, names.get(e.actor))),
          ...(shouts ? { shouts: snapshot.shouts.map(shoutView) } : {}),
        }
      : {};
    return JSON.stringify({ type: 'snapshot', boardId, seq, name, total, part: part++, last, items: page, ...tail });
  };
  for (const item of snapshot.items) {
    page.push(publicCard(item));
    if (page.length === SNAPSHOT.pageSize && part < parts - 1) {
      yield message(false);
      page = [];
    }
  }
  yield message(true);
}

/** The `roster` message: every agent seen on the board, most recently first, each named as `named` tells the reader. */
export async function rosterMessage(
  store: Pick<Store, 'presence'>,
  boardId: string,
  named: (principals: string[]) => Promise<ReadonlyMap<string, string>>,
): Promise<string> {
  const seen = await seenOn(store, boardId);
  const names = await named(seen.map((p) => p.principal));
  const agents = seen.map((p) => withName(presenceView(p), names.get(p.principal)));
  return JSON.stringify({ type: 'roster', boardId, agents, onlineWithinMs: ONLINE_WITHIN_MS });
}

/** One heartbeat to a board's roster sockets, the agent named when known. */
export const presenceMessage = (boardId: string, agent: PresenceView, name?: string): string =>
  JSON.stringify({ type: 'presence', boardId, agent: withName(agent, name) });

const withName = (agent: PresenceView, name: string | undefined) => (name === undefined ? agent : { ...agent, name });

/** A shout a resuming socket missed, as a `shout` message. */
export const shoutMessage = (boardId: string, shout: ShoutRecord): string =>
  JSON.stringify({ type: 'shout', boardId, shout: shoutView(shout) });
