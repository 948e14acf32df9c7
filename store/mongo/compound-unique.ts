// Compound unique indexes on FerretDB 2, in one place. DocumentDB (FerretDB 2.5's backend) checks a
// unique index through an exclusion constraint on a RUM index holding one term per field, and
// intersects the fields' posting lists on every insert: an insert into `events` ({boardId, seq})
// costs as many entries as its board already has. Measured on FerretDB 2.5, one board, 500 events
// an insertMany: 0.3 s at 500 events, 2.6 s at 8,000, 4 to 11 s at 50,000 (the 50,000-item board's
// event copies fell behind its commits). One field is one term, checked in constant time. So there
// each compound unique index is a unique index on one field the adapter adds, holding the key as a
// document, beside a plain compound index for reads: 0.1 s per 500 at any size. MongoDB checks a
// compound unique index by its B-tree, and keeps the index as declared.
//
// A compound unique index whose key is the documents' `_id` (`idKey`: the events' {boardId, seq})
// is kept on FerretDB 2 as the plain index alone: the `_id`'s own unique index (a B-tree there
// too) refuses a second document of the same key, so the key field and its index only cost. They
// cost most of a commit's store writes: each unique key field is a RUM index whose every insert is
// logged page by page (PostgreSQL's generic WAL). Measured under 16 agents on one board (claim →
// submit, FerretDB 2.5, DURABLE=1), WAL per board commit 79–82 KB with it, 51–52 KB without. The
// `_id` of such a document is checked on every write (`checkIdKeys`). A database whose events an
// earlier version wrote keyed loses the unique key index at start (`retiredIndexes`); the key
// fields stay in those documents, hidden.
import type { Document } from 'mongodb';
import { idOfKey, type IndexSpec } from '../ports/store.js';

export interface DriverIndex {
  keys: Document;
  options: { name: string; unique: boolean };
}

const isCompoundUnique = (index: IndexSpec): boolean => index.unique && index.fields.length > 1;
/** A compound unique index whose key the `_id` holds (`idKey`): kept by the `_id`'s own unique index. */
const heldById = (index: IndexSpec): boolean => isCompoundUnique(index) && index.idKey === true;
/** A compound unique index kept as a key field where `keyed`: all of them but those the `_id` holds. */
const isKeyed = (index: IndexSpec): boolean => isCompoundUnique(index) && !heldById(index);
const keyField = (index: IndexSpec): string => `_key_${index.name}`;

/**
 * The driver's indexes for the port's: as declared; or with `keyed` each compound unique one as a
 * unique key field and a plain index for reads, and one whose key is the `_id` as the plain index alone.
 */
export function driverIndexes(indexes: readonly IndexSpec[], keyed: boolean): DriverIndex[] {
  return indexes.flatMap((index) => {
    const fields = Object.fromEntries(index.fields.map((f) => [f, 1]));
    if (!keyed || !isCompoundUnique(index))
      return [{ keys: fields, options: { name: index.name, unique: index.unique } }];
    const read = { keys: fields, options: { name: `${index.name}_fields`, unique: false } };
    if (heldById(index)) return [read];
    // Named as the port names it, so a refusal's message names the port's index.
    return [{ keys: { [keyField(index)]: 1 }, options: { name: index.name, unique: true } }, read];
  });
}

/** Indexes an earlier version made that `driverIndexes` no longer does: dropped at start where `keyed`. */
export const retiredIndexes = (indexes: readonly IndexSpec[], keyed: boolean): string[] =>
  keyed ? indexes.filter(heldById).map((i) => i.name) : [];

/** Refuses a document whose `_id` is not the key of an index that the `_id` holds (`idKey`): that index's uniqueness rests on it. */
export function checkIdKeys(collection: string, indexes: readonly IndexSpec[], doc: Record<string, unknown>): void {
  for (const index of indexes) {
    if (!index.idKey) continue;
    const id = idOfKey(...index.fields.map((f) => doc[f] as string | number));
    if (doc._id !== id)
      throw new Error(`${collection}: a document's _id must be ${id} (its ${index.name}), not ${String(doc._id)}`);
  }
}

/** A collection's compound unique indexes kept as key fields: the fields written beside each document and hidden from readers. */
export class CompoundKeys {
  private constructor(private readonly indexes: readonly IndexSpec[]) {}

  /** The keys of a collection with `indexes`, or null when it has no compound unique index. */
  static of(indexes: readonly IndexSpec[]): CompoundKeys | null {
    const compound = indexes.filter(isCompoundUnique);
    return compound.length ? new CompoundKeys(compound) : null;
  }

  /** The fields the adapter adds (or added: an `idKey` index's, in documents an earlier version wrote): readers never see them. */
  get fields(): string[] {
    return this.indexes.map(keyField);
  }

  /** The indexes whose key fields are written. */
  private get written(): readonly IndexSpec[] {
    return this.indexes.filter(isKeyed);
  }

  /** The key fields of `doc` (a missing field counts as null, as a unique index counts it). */
  of(doc: Record<string, unknown>): Document {
    return Object.fromEntries(
      this.written.map((index) => [keyField(index), Object.fromEntries(index.fields.map((f) => [f, doc[f] ?? null]))]),
    );
  }

  /** `doc` with its key fields. */
  with<T>(doc: T): T {
    return { ...doc, ...this.of(doc as Record<string, unknown>) };
  }

  /** Whether an update setting `changes` and unsetting `unset` moves a key (indexed fields are top-level). */
  touches(changes: Document, unset: readonly string[]): boolean {
    const written = new Set([...Object.keys(changes), ...unset]);
    return this.written.some((index) => index.fields.some((f) => written.has(f)));
  }

  /** The key fields of `doc` once `changes` are set and `unset` removed. */
  after(doc: Document, changes: Document, unset: readonly string[]): Document {
    const next: Record<string, unknown> = { ...doc, ...changes };
    for (const field of unset) delete next[field];
    return this.of(next);
  }
}
