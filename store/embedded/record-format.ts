// The embedded store's own record format (record-writer.ts writes it, record-reader.ts reads it):
// the byte each kind of value starts with, the strings a board's records repeat (field names,
// states, event types, principals' prefixes), written as an index, and the fixed shapes of its
// records (field lists in the order the board writes them), written without their keys.
// Values on disk name all three by number: APPEND ONLY. Reordering, editing or removing an element
// would make every data directory read another value.

import { eventId as idOfEvent } from '../ports/store.js';

/** A value's first byte: "never used" in msgpack, and below 250 (lmdb-js takes 250 and up for compressed). */
export const RECORD_TAG = 0xc1;
/** The second: this layout's number. */
export const FORMAT = 1;

/**
 * The byte each value starts with, and what follows it; a small non-negative integer (0 to 127)
 * is that byte alone. A varint is 7 bits a byte, low first, the high bit set on all but the last.
 */
export const T = {
  knownString: 0x80, // 0x80 + its index in KNOWN_STRINGS, below KNOWN_ONE_BYTE
  null: 0xd0,
  false: 0xd1,
  true: 0xd2,
  undefined: 0xd3,
  float: 0xd4, // 8 bytes, little-endian
  negative: 0xd5, // varint of its magnitude
  positive: 0xd6, // varint, from 128
  derived: 0xd7, // in a shape, a field the others give (Shape.derived)
  string: 0xd8, // varint of its UTF-8 length, UTF-8
  uuid: 0xd9, // 16 bytes (a lowercase uuid)
  prefixedUuid: 0xda, // a known string (its prefix: 'agent:'), 16 bytes
  isoDate: 0xdb, // varint (year * 13 + month) * 32 + day, varint milliseconds of the day
  array: 0xdc, // varint length, its values
  map: 0xdd, // varint count, each key (a string value) and value
  shape: 0xde, // its index in SHAPES, its fields' values in the shape's order
  knownStringLong: 0xdf, // a byte: its index in KNOWN_STRINGS less KNOWN_ONE_BYTE
} as const;
/** Known strings from this index on take a second byte. */
export const KNOWN_ONE_BYTE = T.null - T.knownString;

/** Strings written as one byte (the first KNOWN_ONE_BYTE) or two. */
export const KNOWN_STRINGS: readonly string[] = [
  // 0..: values
  'agent:',
  'user:',
  'token:',
  'task',
  'none',
  'required',
  'work',
  'verify',
  'pending',
  'ready',
  'claimed',
  'awaiting_verify',
  'verifying',
  'done',
  'blocked',
  'cancelled',
  'pass',
  'fail',
  'item.created',
  'item.state',
  'item.submitted',
  'item.verified',
  'item.updated',
  'item.progress',
  'item.comment',
  'lease.granted',
  'lease.renewed',
  'lease.released',
  'lease.expired',
  'lease.revoked',
  // 30..: keys of event data and of objects that do not match a shape
  'item',
  'from',
  'to',
  'lease',
  'title',
  'state',
  'dependsOn',
  'head',
  'by',
  'at',
  'workId',
  'version',
  'submission',
  'updatedAt',
  'createdAt',
  'description',
  'type',
  'priority',
  'parentId',
  'rank',
  'labels',
  'criteria',
  'doctrine',
  'spec',
  'life',
  'attempts',
  'maxAttempts',
  'verifications',
  'workHolders',
  'finding',
  'overridden',
  'blockedReason',
  'progress',
  'endedLeases',
  'readyAt',
  'holder',
  'purpose',
  'fencingToken',
  'expiresAt',
  'leaseId',
  'grantedAt',
  'hardExpiresAt',
  'ttlMs',
  'verdict',
  'reason',
  'v',
  'data',
  'actor',
  'seq',
  'boardId',
  // 80..: two bytes
  '_id',
  'item.superseded',
  'item.overridden',
  'items.reordered',
  'board.rewound',
  'doctrine.proposed',
  'doctrine.agreed',
  'doctrine.ratified',
  'doctrine.rejected',
  'doctrine.level',
  'doctrine.blind_test',
  'spec.created',
  'spec.updated',
  'system:lease-scheduler',
  'nextWorkSeq',
  'nextFencingToken',
  'lastSeq',
  'nextDeadline',
  'commitId',
  'outbox',
  'counts',
  'entries',
  'stats',
  'days',
  'active',
  'grants',
  'expiries',
  'verdicts',
  'passes',
  'readyToDone',
  'agentsPeak',
  'retiredLeases',
  'paused',
  'text',
  'note',
];

export interface Shape {
  readonly keys: readonly string[];
  /** A field the others give: written as a mark when it holds what `of` says, else as it is. */
  readonly derived?: { readonly key: string; of(record: Record<string, unknown>): unknown };
}

const ITEM_STATE_COUNTS = [
  'pending',
  'ready',
  'claimed',
  'awaiting_verify',
  'verifying',
  'done',
  'blocked',
  'cancelled',
];
const EVENT_FIELDS = ['_id', 'boardId', 'seq', 'type', 'actor', 'workId', 'at', 'data'];
const eventId = {
  key: '_id',
  of: (e: Record<string, unknown>) =>
    typeof e.boardId === 'string' && typeof e.seq === 'number' ? idOfEvent(e.boardId, e.seq) : null,
};

/** An object whose own keys are exactly one of these, in this order, is written without its keys. */
export const SHAPES: readonly Shape[] = [
  // A board's entry ([boardId, workId] → { v, item }) and the item it holds.
  { keys: ['v', 'item'] },
  {
    keys: [
      'title',
      'description',
      'type',
      'priority',
      'parentId',
      'dependsOn',
      'verify',
      'maxAttempts',
      'criteria',
      'doctrine',
      'spec',
      'labels',
      'workId',
      'rank',
      'state',
      'life',
      'progress',
      'endedLeases',
      'createdAt',
      'updatedAt',
      'version',
      'readyAt',
    ],
  },
  {
    keys: [
      'verify',
      'attempts',
      'maxAttempts',
      'lease',
      'submission',
      'verifications',
      'workHolders',
      'finding',
      'overridden',
      'blockedReason',
    ],
  },
  { keys: ['leaseId', 'holder', 'purpose', 'fencingToken', 'grantedAt', 'expiresAt', 'hardExpiresAt', 'ttlMs'] },
  { keys: ['head', 'by', 'at'] },
  { keys: ['by', 'head', 'verdict', 'finding', 'at'] },
  // An event as the log keeps it, and as the header's outbox does (no version).
  { keys: [...EVENT_FIELDS, 'version'], derived: eventId },
  { keys: EVENT_FIELDS, derived: eventId },
  // What an event's data carries: the public lease and the item's patch after a claim and a submit.
  { keys: ['holder', 'purpose', 'fencingToken', 'expiresAt'] },
  { keys: ['workId', 'version', 'state', 'lease', 'updatedAt'] },
  { keys: ['workId', 'version', 'state', 'lease', 'submission', 'updatedAt'] },
  {
    keys: [
      'workId',
      'title',
      'description',
      'type',
      'priority',
      'rank',
      'parentId',
      'dependsOn',
      'verify',
      'criteria',
      'doctrine',
      'spec',
      'labels',
      'state',
      'attempts',
      'maxAttempts',
      'lease',
      'submission',
      'verifications',
      'finding',
      'overridden',
      'blockedReason',
      'progress',
      'createdAt',
      'updatedAt',
      'version',
    ],
  },
  // A board's header, its counts per state and its stats of a day.
  {
    keys: [
      '_id',
      'version',
      'nextWorkSeq',
      'nextFencingToken',
      'lastSeq',
      'nextDeadline',
      'commitId',
      'outbox',
      'counts',
      'entries',
      'stats',
    ],
  },
  { keys: ITEM_STATE_COUNTS },
  { keys: ['done', 'grants', 'expiries', 'verdicts', 'passes', 'readyToDone', 'counts', 'agentsPeak'] },
  { keys: ['days', 'active'] },
];
