// The WebSocket protocol (ARCHITECTURE.md): JSON messages, validated like every other input, and
// its description for the OpenAPI document (kept here, beside what it describes).
import { z } from 'zod';
import { RESOURCE_TOKEN_VIEW } from '../board/visibility.js';
import { SOCKETS_PER_CREDENTIAL } from './socket-cap.js';

/** Board event topics; `presence` is no event topic: the roster on subscribe, then each heartbeat. */
export const TOPICS = ['items', 'leases', 'shouts', 'doctrine', 'activity', 'presence'] as const;
export type Topic = (typeof TOPICS)[number];

export const ClientMessage = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('subscribe'),
    boardId: z.string().min(1).max(64),
    topics: z.array(z.enum(TOPICS)).min(1).max(TOPICS.length).default(['activity']),
    since: z.number().int().min(0).optional(),
    /** Start from the board as it stands (its items in pages, newest events and shouts) instead of from `since`. */
    snapshot: z.boolean().optional(),
    /** The last shout id the client has: the shouts after it are sent before live ones (shouts are not in the event log). */
    shoutsAfter: z.string().min(1).max(200).optional(),
  }),
  z.strictObject({ type: z.literal('unsubscribe'), boardId: z.string().min(1).max(64) }),
  z.strictObject({ type: z.literal('ping') }),
]);
export type ClientMessage = z.infer<typeof ClientMessage>;

/**
 * What only an operator's socket may send besides (DOMAIN.md "Operators"): the `firehose` topic,
 * every board's events. It is read only when a message is no ClientMessage, so anyone else gets
 * the very refusal a message naming an unknown topic got before it existed. `boards` and `types`
 * (an event type, or a prefix ending in a dot, e.g. `lease.`) narrow it before it is sampled.
 */
export const FirehoseMessage = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('subscribe'),
    topics: z.tuple([z.literal('firehose')]),
    boards: z.array(z.string().min(1).max(64)).min(1).max(50).optional(),
    types: z.array(z.string().min(1).max(64)).min(1).max(20).optional(),
  }),
  z.strictObject({ type: z.literal('unsubscribe'), topics: z.tuple([z.literal('firehose')]) }),
]);
export type FirehoseMessage = z.infer<typeof FirehoseMessage>;

/** The firehose's pace: at most `perSecond` events in any second per socket; what was left out is counted every `reportMs`. */
export const FIREHOSE = { perSecond: 200, reportMs: 1000 } as const;

/** Which topic a board event belongs to (activity carries every event). */
export function topicOf(type: string): Topic {
  if (type.startsWith('lease.')) return 'leases';
  if (type.startsWith('shout')) return 'shouts';
  // Doctrine entries and spec clauses name no item: a watcher of the items need not hear them.
  if (type.startsWith('doctrine.') || type.startsWith('spec.')) return 'doctrine';
  return 'items';
}

/** Close codes the server uses. */
export const CLOSE = { slowConsumer: 4008, revoked: 4001, overBudget: 4029, shutdown: 1001, tooBig: 1009 } as const;
/** The reason a slow consumer's socket is closed with (CLOSE.slowConsumer). */
export const SLOW_CONSUMER_REASON = 'slow consumer: messages were dropped; reconnect with since';
/**
 * When a socket is a slow consumer (CLOSE.slowConsumer): more than `bytes` wait for it (its backlog,
 * or what it would be sent of the live events held for it while it replays the log, beyond what
 * the replay sent), more than `heldEvents` are held for it (its topics' or not: each is kept until
 * the replay ends), or a sender waiting for it to read (a replay, a snapshot's pages) saw it read
 * nothing for `stalledMs`.
 */
export const SLOW_CONSUMER = { bytes: 1024 * 1024, heldEvents: 20_000, stalledMs: 30_000 } as const;

/** What one socket may cost: messages per window, boards watched at once. */
export const SOCKET_BUDGET = { messages: 100, windowMs: 10_000, subscriptions: 50 } as const;

/**
 * Items per `snapshot` message at most, the newest events and shouts a snapshot carries, and the
 * bytes a message holds past its first entry: well under the socket's 1 MiB backlog cap, which no
 * single message may pass, with room for what waits before it (REPLAY_BACKLOG, delivery.ts).
 */
export const SNAPSHOT = { pageSize: 500, recent: 50, pageBytes: 256 * 1024 } as const;

/**
 * What a snapshot draws on the socket's message budget: one message per 1,000 items (a page of
 * GET /api/items), at least one and at most half the budget, so reloading a board is bounded like
 * reading it over REST, and even the largest board loads.
 */
export const snapshotCost = (items: number): number =>
  Math.min(SOCKET_BUDGET.messages / 2, Math.max(1, Math.ceil(items / 1000)));

/** How GET /api/ws works, for the OpenAPI document. */
export const SOCKET_DESCRIPTION =
  'Upgrade with a session cookie or `Authorization: Bearer`; a browser upgrade from a foreign Origin is refused (403 CSRF_REJECTED). A GET that asks for no upgrade (no Sec-WebSocket-Key) answers 404 NOT_FOUND. JSON messages. ' +
  'Client: `{type: "subscribe", boardId, topics: [items|leases|shouts|doctrine|activity|presence], since?, snapshot?, shoutsAfter?}`, `{type: "unsubscribe", boardId}`, `{type: "ping"}`. ' +
  'Event topics: `leases` carries `lease.*` events, `shouts` shout events, `doctrine` the `doctrine.*` and `spec.*` events (workId null; the entry as GET /api/doctrine shows it in `data.entry`, never an expected digest; the clause in `data.clause`), `items` every other event (items, reorders, the board’s own), and `activity` every event of them all. ' +
  'Server: `{type: "subscribed", boardId, topics, seq, role}`, `{type: "event", boardId, seq, event: {type, actor, workId, at, data}}` (every event once, in seq order; with `since` the missed ones are replayed from the log first), ' +
  '`{type: "shout", boardId, shout}` for shouts (direct ones only to sender, addressee and operators; reaching the addressee sets deliveredAt), ' +
  '`{type: "resync", boardId, seq}` when `since` is older than the retained log (reload GET /api/status, or subscribe again with `snapshot`), `{type: "unsubscribed", boardId, reason?}` (after unsubscribe, or when the board is deleted), `{type: "pong"}`, and `{type: "error", error}` with the REST error envelope (e.g. PROJECT_SCOPE_DENIED for a board the credential cannot reach, BOARD_CLOSED for one whose owner’s account was deleted, as REST answers). ' +
  'An event about an item carries `data.item`: that item as the commit left it, as a patch over GET /api/items/{workId} (workId, version and state always, every changed field besides; all fields for a new item); a reorder carries `data.items`, the patches of the items it ranked. Apply a patch over an item of a lower version. An `item.state` event (`data.from`, `data.to`) that a rewind made carries `data.rewound: true`: the item was put back in that state, no work moved it (metrics count no such move as done). A rewind’s events about the items it kept carry their patches like any other; one about an item it removed carries none (the item is gone); its `board.rewound` carries no patches, as a rewind also restores and changes items without an event each: load the board again (GET /api/items, or subscribe with `snapshot`). No lease id is ever in an event. ' +
  `\`snapshot: true\` starts from the board as it stands instead of from \`since\`: after \`subscribed\` come \`{type: "snapshot", boardId, seq, name, total, part, last, items}\` messages (up to ${SNAPSHOT.pageSize} items each, fewer when they are large: a message holds about ${SNAPSHOT.pageBytes / 1024} KiB; card fields: the item without description, criteria, doctrine, spec and progress), then \`recent\` (the newest ${SNAPSHOT.recent} events, newest first) and, for the shouts or activity topic, \`shouts\` (the newest ${SNAPSHOT.recent} the subscriber may see, newest first): these come on the last message, or, when they do not fit in one, spread over the last messages, in order (join each list over the pages; the last message always has them, perhaps empty); then every event after \`seq\`. ` +
  `What a socket receives is what REST reads show the same credential (one rule): ${RESOURCE_TOKEN_VIEW} A snapshot holds only the items the credential may read, and is refused (PROJECT_SCOPE_DENIED) to one that reads none, as GET /api/items is; \`presence\` is refused to a resource token without the status group, as GET /api/agents is; a topic that carries the log's events about items (any but \`shouts\`, \`presence\` and \`doctrine\`) is refused to one that may not read the event log, as GET /api/activity is, and \`doctrine\` to one that covers neither the doctrine nor the spec. ` +
  '`shoutsAfter` (a shout id) sends the shouts posted after it before live ones, for a client resuming with `since`. ' +
  'The `presence` topic sends `{type: "roster", boardId, agents: [{principal, status, note, workId, lastSeenAt}], onlineWithinMs}` on every subscribe and `{type: "presence", boardId, agent}` for each heartbeat (POST /api/status/heartbeat); an agent is online when seen within onlineWithinMs. ' +
  'A lease holder gets `lease.expiring` (seq null) and `lease.expired` events for its own leases without subscribing, while it may see the board, and as it may (without the item’s patch where it may not read the item). ' +
  `Close codes: 4001 the credential was revoked (logout, token revoked or reissued, password or email change, the board or account deleted); 4008 slow consumer (more than ${SLOW_CONSUMER.bytes / 1024 / 1024} MiB was waiting, or ${SLOW_CONSUMER.heldEvents.toLocaleString('en')} events were held for it during a replay, or a replay waited ${SLOW_CONSUMER.stalledMs / 1000} s for the client to read anything; reconnect with \`since\`); 4029 over budget (more than ${SOCKET_BUDGET.messages} messages in ${SOCKET_BUDGET.windowMs / 1000} s); 1009 a message over 64 KiB; 1001 the node is shutting down (reconnect, to any node, with \`since\`). Idle sockets are pinged. One socket watches at most ${SOCKET_BUDGET.subscriptions} boards (an error SUBSCRIPTION_LIMIT beyond); a subscribe to a board the socket already watches merges its topics into that subscription (\`merged: true\`, no second replay). ` +
  `A credential (a token, or an account’s sessions together) holds at most ${SOCKETS_PER_CREDENTIAL} open sockets on each node: the next upgrade is refused 429 RATE_LIMITED with the cap in details (\`scope: "sockets"\`, \`limit\`). Every upgrade draws one request from the credential’s request budget (refused 429 RATE_LIMITED with the rate headers once it is spent). ` +
  `Nothing read over an open socket draws on the REST request budget; the socket has its own message budget, on which a snapshot costs one message per 1,000 items (at most ${SOCKET_BUDGET.messages / 2}). ` +
  'Operators (a socket opened with the session of an account in OPERATOR_EMAILS, not impersonating) may subscribe to any board read-only, member or not (`role: "operator"`, every shout; each such subscription is audited as `admin.live.subscribe`), and to the firehose: ' +
  `\`{type: "subscribe", topics: ["firehose"], boards?, types?}\` (answered \`{type: "subscribed", topics: ["firehose"], boards, types, perSecond}\`, audited as \`admin.live.firehose\`; sent again, it replaces the filter) sends \`{type: "firehose", boardId, boardName, seq, event}\` for every board's events (boardName null until the node has read it, read again each minute) as they are committed on any node, in seq order per board, at most ${FIREHOSE.perSecond} in any second (a socket more than 256 KiB behind skips them too), and \`{type: "firehose.dropped", count}\` at most every ${FIREHOSE.reportMs / 1000} s for those left out; \`boards\` (ids) and \`types\` (event types, or prefixes ending in a dot) narrow it before it is sampled. \`{type: "unsubscribe", topics: ["firehose"]}\` ends it. To anyone else the firehose is an unknown topic.`;
