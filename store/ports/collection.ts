// The storage primitive both adapters implement: a collection of versioned documents with
// unique indexes and compare-and-set updates on `version`.
import type { Maybe } from './maybe.js';

export interface Doc {
  _id: string;
  version: number;
}

type Scalar = string | number | boolean | null;
export type FieldCondition<V> =
  V | { $in: readonly V[] } | { $gt?: V; $gte?: V; $lt?: V; $lte?: V } | { $exists: boolean };

/** Conditions on top-level fields, all of which must hold. */
export type Filter<T> = { [K in keyof T]?: T[K] extends Scalar | undefined ? FieldCondition<T[K]> : never };

export interface FindOptions<T> {
  sort?: ReadonlyArray<readonly [keyof T & string, 1 | -1]>;
  skip?: number;
  limit?: number;
}

/** Reads only `_id` and the named fields of each match (cheap for large documents). */
export type Selected<T extends Doc, K extends keyof T> = Pick<T, '_id' | K>;

export type Changes<T> = Partial<Omit<T, '_id' | 'version'>>;

/**
 * Reads by id, and nothing else: a collection, or a cache in front of one that answers now what it
 * holds (src/auth/identity-cache.ts).
 */
export interface ReadsById<T> {
  get(id: string): Maybe<T | null>;
}

export interface Collection<T extends Doc> {
  get(id: string): Promise<T | null>;
  /**
   * The stored document's version, or null when there is none; the document itself is not read.
   * Answered now by a store that reads its own file (the embedded one).
   */
  versionOf(id: string): Maybe<number | null>;
  findOne(filter: Filter<T>): Promise<T | null>;
  find(filter: Filter<T>, options?: FindOptions<T>): Promise<T[]>;
  select<K extends keyof T & string>(
    filter: Filter<T>,
    fields: readonly K[],
    options?: FindOptions<T>,
  ): Promise<Selected<T, K>[]>;
  count(filter: Filter<T>): Promise<number>;
  /** Fails with DuplicateKeyError when `_id` or a unique index is taken. */
  insert(doc: T): Promise<void>;
  /**
   * Inserts those of `docs` whose `_id` is not stored yet, one after another in the given order,
   * so a reader never sees one of them without those before it (copying a board's outbox into
   * the event log, possibly again). The store may read `docs` until the call resolves: the caller
   * does not change them meanwhile (the hot path's copy is not taken twice).
   */
  insertMissing(docs: readonly T[]): Promise<void>;
  /**
   * Sets `changes` (and removes `unset`) only when the stored version equals `expectedVersion`;
   * bumps the version. Returns the new document, or null when missing or the version moved.
   */
  update(
    id: string,
    expectedVersion: number,
    changes: Changes<T>,
    unset?: ReadonlyArray<keyof Changes<T>>,
  ): Promise<T | null>;
  /** Deletes when present (and, if given, at `expectedVersion`). */
  delete(id: string, expectedVersion?: number): Promise<boolean>;
  deleteMany(filter: Filter<T>): Promise<number>;
}

export class DuplicateKeyError extends Error {
  constructor(
    readonly collection: string,
    readonly index: string,
  ) {
    super(`duplicate key in ${collection} on ${index}`);
    this.name = 'DuplicateKeyError';
  }
}

/** The store could not be reached or failed; callers fail closed. */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super('store unavailable', { cause });
    this.name = 'StoreUnavailableError';
  }
}
