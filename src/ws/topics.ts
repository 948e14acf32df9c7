// The engine's topics of a board (one publish reaches every socket joined to one) and which topics
// of the protocol carry what: what every watcher of a board hears alike goes out as a publish.
import type { BoardRead } from '../board/visibility.js';
import type { Topic } from './protocol.js';

/** Whether a subscription with `topics` carries a lease's end (its holder then needs no frame of its own). */
export const carriesLeaseEnds = (topics: ReadonlySet<Topic>): boolean => topics.has('leases') || topics.has('activity');
/** Whether a subscription with `topics` hears the board's shouts. */
export const hearsShouts = (topics: ReadonlySet<Topic>): boolean => topics.has('shouts') || topics.has('activity');

/**
 * The REST reads a subscribe amounts to, each refused as REST refuses it (src/board/feed/look.ts):
 * the event log (GET /api/activity) for any topic that carries the log's events about items (all
 * but shouts and presence, which carry shout messages and the roster, and doctrine), the doctrine
 * and spec for the doctrine topic (their events alone: GET /api/doctrine, /api/spec), the items
 * for a snapshot (GET /api/items), the roster for presence (GET /api/agents), the shouts for a
 * topic that carries them (GET /api/shouts).
 */
export const readsOf = (topics: ReadonlySet<Topic>, snapshot: boolean): BoardRead[] => [
  ...([...topics].some((t) => t !== 'shouts' && t !== 'presence' && t !== 'doctrine') ? ['log' as const] : []),
  ...(topics.has('doctrine') ? ['doctrine' as const] : []),
  ...(snapshot ? ['items' as const] : []),
  ...(topics.has('presence') ? ['roster' as const] : []),
  ...(hearsShouts(topics) ? ['shouts' as const] : []),
];

/** The engine's topics of a board: its broadcast shouts (not direct ones), its roster. */
export const shoutsTopic = (boardId: string): string => `shouts/${boardId}`;
export const rosterTopic = (boardId: string): string => `presence/${boardId}`;

/**
 * What goes alike to every watcher of a board with a topic is published once, to a topic of the
 * engine's: the board's shouts and heartbeats to its whole views, from the subscribe on; its events once the
 * subscription has caught up (streamTopics). Direct shouts, a holder's own lease news and what a
 * narrower view sees (a resource token's: shouts, heartbeats) are sent socket by socket.
 */
export const broadcastTopics = (boardId: string, sub: { topics: ReadonlySet<Topic>; whole: boolean }): string[] => [
  ...(sub.whole && hearsShouts(sub.topics) ? [shoutsTopic(boardId)] : []),
  ...(sub.whole && sub.topics.has('presence') ? [rosterTopic(boardId)] : []),
];

/** Each board event is published to its topic's and to activity's: a subscription joins activity's alone, or each of its event topics' (presence is no event topic). */
export const eventTopic = (boardId: string, topic: Topic): string => `events/${boardId}/${topic}`;
export const streamTopics = (boardId: string, topics: ReadonlySet<Topic>): string[] =>
  topics.has('activity')
    ? [eventTopic(boardId, 'activity')]
    : [...topics].filter((t) => t !== 'presence').map((t) => eventTopic(boardId, t));
