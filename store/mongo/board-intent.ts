// A board header's intent: what its last commit wrote, inline (packed) when small, or a reference
// to parts staged beside it, and what it carries of earlier commits not yet known to be in the log
// (store/mongo/mongo-boards.ts says how a commit uses it).
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { Binary, BSON, type Document } from 'mongodb';
import type { BoardRecord, ItemWrites, StoredItem } from '../ports/store.js';

/**
 * What a header carries inline at most: its items and events together, with what it carries. A
 * document store rewrites a document it updates, whole (WiredTiger and PostgreSQL alike), and
 * every commit updates the header; more is staged in parts (store/mongo/staged-parts.ts). Staging costs more
 * than it saves up to these bounds: on FerretDB 2 (DURABLE=1), store CPU per commit for an intent
 * of 16 / 32 / 64 KB inline 1.7–2.0 / 2.9 / 2.9–3.2 ms, staged in two parts with a small header
 * update 3.8–4.7 ms at 32 and 64 KB (and its parts are deleted later). At 16 KB, group commits of
 * a 16-agent fleet (about 12 items and 19 events each) were nearly all staged. Those sizes were
 * of the intent as BSON; it is now packed (`Packed`), and INLINE_BYTES bounds it packed.
 */
export const INLINE_ENTRIES = 128;
export const INLINE_BYTES = 64 * 1024;

export type Outbox = NonNullable<BoardRecord['outbox']>;

/** What one commit wrote: its items (whole, or removed) and its events, when it set any. */
export interface Written extends ItemWrites {
  put: StoredItem[];
  removed: string[];
  events?: Outbox;
}

/** An earlier commit's item writes, carried by a later intent until they are known to be in the log. */
export interface Carried extends ItemWrites {
  v: number;
}

/**
 * Inline (with what it carries), or staged: then `events` says whether the commit set an outbox
 * (its events are in the parts), and it carries nothing (a staged commit waits for the log first).
 */
export type Intent = Inline | Staged;
export type Inline = { v: number; carry?: Carried[] } & Written;
export type Staged = { v: number; stage: string; parts: number; events: boolean };

/**
 * An inline intent as the header stores it: its version in the clear (readers compare it without
 * unpacking), the rest packed (BSON, deflated at level 1). A group commit's items and events
 * repeat field names and values: under 16 agents an intent of 38 KB (mean) packs into 3.5 KB, in
 * about 0.3 ms, and the header is rewritten whole on every commit. One header update with a 36.6 KB
 * intent cost FerretDB 2 (DURABLE=1) 2.7–2.9 ms of store CPU, packed 1.5–1.7 ms (300 updates each,
 * twice, alternated; the node's CPU per update within noise). Headers written before this kept it
 * unpacked; they still read.
 */
export interface Packed {
  v: number;
  packed: Binary;
}

export interface HeaderDoc extends BoardRecord {
  /** 2 for this layout; absent on a board whose items an earlier version kept inside the header. */
  layout?: 2;
  /** As stored: packed, or staged (or unpacked, written before packing); as read, unpacked (see `unpacked`). */
  intent?: Intent | Packed | null;
  items?: Record<string, StoredItem>;
}

/** A header as read, its intent unpacked. */
export type ReadHeader = HeaderDoc & { intent?: Intent | null };

/** The entries a header says its board holds: `entries` (items, doctrine entries, spec clauses), else the items counted by state. */
export const liveCount = (header: BoardRecord): number | null =>
  header.entries ?? (header.counts ? Object.values(header.counts).reduce((a, b) => a + b, 0) : null);
export const entriesOf = (writes: ItemWrites & { events?: Outbox }): number =>
  writes.put.length + writes.removed.length + (writes.events?.length ?? 0);
/** An intent (with what it carries) packed, when small enough to ride in the header; else null. */
export function packedIfFits(intent: Inline): Packed | null {
  if (entriesOf(intent) + (intent.carry ?? []).reduce((n, c) => n + entriesOf(c), 0) > INLINE_ENTRIES) return null;
  const packed = new Binary(deflateRawSync(BSON.serialize(intent as unknown as Document), { level: 1 }));
  return packed.length() <= INLINE_BYTES ? { v: intent.v, packed } : null;
}
/** A header as read: its intent unpacked (in place). */
export function unpacked(header: HeaderDoc): ReadHeader {
  const intent = header.intent;
  if (intent && 'packed' in intent)
    header.intent = BSON.deserialize(inflateRawSync(intent.packed.value())) as unknown as Inline;
  return header as ReadHeader;
}
/** The earlier commits' writes an intent carries. */
export const carriedBy = (intent: Intent | null | undefined): Carried[] =>
  (intent && 'carry' in intent && intent.carry) || [];

/**
 * The port's record: the header without what the adapter keeps in it, the outbox being the events
 * of the last commit while no plain update moved the version past it (a header of the earlier
 * layout kept its own).
 */
export function recordOf(header: ReadHeader, written: Written | null): BoardRecord {
  const { layout: _layout, intent: _intent, items: _items, ...record } = header;
  if (written?.events && header.intent?.v === header.version) record.outbox = written.events;
  return record;
}
