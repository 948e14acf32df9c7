// One collection on MongoDB: conditional updates filtered on `version`, driver errors mapped to
// the port's errors so callers see the same failures as on the embedded store.
import { MongoError, MongoServerError, type Collection as Driver, type Document } from 'mongodb';
import {
  DuplicateKeyError,
  StoreUnavailableError,
  type Changes,
  type Collection,
  type Doc,
  type Filter,
  type FindOptions,
  type IndexSpec,
  type Selected,
} from '../ports/store.js';
import { checkIdKeys, type CompoundKeys } from './compound-unique.js';
import { duplicateWrites, indexNamedIn, isDuplicateKey } from './duplicate-key.js';

export class MongoCollection<T extends Doc> implements Collection<T> {
  /** Calls sent to the server and not yet answered: close waits for them (see close). */
  private readonly underWay = new Set<Promise<unknown>>();
  /** Fields the adapter keeps in a document that the port never shows (a board header's commit intent, compound keys). */
  private readonly hidden: Document | undefined;
  /** Whether a unique index of it is its documents' `_id` (`idKey`). */
  private readonly idKeyed: boolean;

  constructor(
    protected readonly name: string,
    private readonly indexes: readonly IndexSpec[],
    protected readonly driver: Driver<Document>,
    hidden: readonly string[] = [],
    /** Compound unique indexes kept as key fields (FerretDB 2: compound-unique.ts), or null. */
    private readonly keys: CompoundKeys | null = null,
  ) {
    this.idKeyed = indexes.some((i) => i.idKey);
    const all = [...hidden, ...(keys?.fields ?? [])];
    this.hidden = all.length ? Object.fromEntries(all.map((f) => [f, 0])) : undefined;
  }

  get(id: string): Promise<T | null> {
    return this.run(
      () => this.driver.findOne({ _id: id } as Document, { projection: this.hidden }) as Promise<T | null>,
    );
  }

  async versionOf(id: string): Promise<number | null> {
    const doc = await this.run(() => this.driver.findOne({ _id: id } as Document, { projection: { version: 1 } }));
    return typeof doc?.version === 'number' ? doc.version : null;
  }

  findOne(filter: Filter<T>): Promise<T | null> {
    return this.run(() => this.driver.findOne(filter as Document, { projection: this.hidden }) as Promise<T | null>);
  }

  find(filter: Filter<T>, options: FindOptions<T> = {}): Promise<T[]> {
    return this.read(filter, this.hidden, options) as Promise<T[]>;
  }

  select<K extends keyof T & string>(
    filter: Filter<T>,
    fields: readonly K[],
    options: FindOptions<T> = {},
  ): Promise<Selected<T, K>[]> {
    return this.read(filter, Object.fromEntries(fields.map((f) => [f, 1])), options) as Promise<Selected<T, K>[]>;
  }

  count(filter: Filter<T>): Promise<number> {
    return this.run(() => countOf(this.driver, filter as Document));
  }

  /**
   * The documents `filter` matches, in one batch (`firstBatchOnly`); with the same
   * sort, skip and limit through a cursor when that batch may have been cut.
   */
  protected async read(
    filter: Filter<T>,
    projection: Document | undefined,
    options: FindOptions<T>,
  ): Promise<Document[]> {
    const query = {
      ...(projection && { projection }),
      sort: Object.fromEntries(options.sort ?? [['_id', 1]]),
      ...(options.skip && { skip: options.skip }),
      ...(options.limit !== undefined && { limit: options.limit }),
    };
    return this.run(() => firstBatchOnly(this.driver, filter as Document, query));
  }

  async insert(doc: T): Promise<void> {
    await this.run(() => this.driver.insertOne(this.stored(doc)), doc as unknown as Record<string, unknown>);
  }

  async insertMissing(docs: readonly T[]): Promise<void> {
    // An ordered insertMany stops at its first failure. On an id already stored, the ids of the
    // rest already stored are asked for at once and left out (a copy repeated after a failover or
    // a failed copy holds many), so a retry costs two round trips rather than one per duplicate.
    for (let rest = docs; rest.length;) {
      try {
        await this.track(
          this.driver.insertMany(
            rest.map((d) => this.stored(d)),
            { ordered: true },
          ),
        );
        return;
      } catch (e) {
        const at = firstDuplicateAt(e);
        if (at === null) return void (await this.run(() => Promise.reject(e)));
        rest = rest.slice(at + 1);
        if (!rest.length) return;
        const stored = await this.run(() =>
          this.driver.find({ _id: { $in: rest.map((d) => d._id) } } as Document, { projection: { _id: 1 } }).toArray(),
        );
        const present = new Set(stored.map((d) => String(d._id)));
        rest = rest.filter((d) => !present.has(d._id));
      }
    }
  }

  async update(
    id: string,
    expectedVersion: number,
    changes: Changes<T>,
    unset: ReadonlyArray<keyof Changes<T>> = [],
  ): Promise<T | null> {
    const update: Document = { $inc: { version: 1 } };
    if (Object.keys(changes).length) update.$set = changes;
    if (unset.length) update.$unset = Object.fromEntries(unset.map((f) => [f, '']));
    if (this.keys?.touches(changes, unset as readonly string[])) {
      // The key fields follow the fields they hold; the version check keeps the read and the write one.
      const before = await this.run(() => this.driver.findOne({ _id: id, version: expectedVersion } as Document));
      if (!before) return null;
      update.$set = { ...changes, ...this.keys.after(before, changes, unset as readonly string[]) };
    }
    const doc = await this.run(
      () =>
        this.driver.findOneAndUpdate({ _id: id, version: expectedVersion } as Document, update, {
          returnDocument: 'after',
          ...(this.hidden && { projection: this.hidden }),
        }),
      { _id: id, ...changes },
    );
    return doc as T | null;
  }

  async delete(id: string, expectedVersion?: number): Promise<boolean> {
    const filter: Document = expectedVersion === undefined ? { _id: id } : { _id: id, version: expectedVersion };
    return (await this.run(() => this.driver.deleteOne(filter))).deletedCount === 1;
  }

  /**
   * The store's close: every call under way is answered first.
   * A server carries out what a client sent before it closed, so a write no caller waited for (a
   * token's last use, a clean-up) would otherwise land after close: after the node said it was gone,
   * or in a test after its database was dropped (creating it again).
   */
  async close(): Promise<void> {
    // An operation of several calls sends its next one once the last is answered: a turn of the
    // event loop after they settle, whatever comes next is under way too, and is waited for.
    while (this.underWay.size) {
      await Promise.allSettled([...this.underWay]);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** A call to the server, counted until it is answered. */
  protected track<R>(call: Promise<R>): Promise<R> {
    this.underWay.add(call);
    const answered = () => void this.underWay.delete(call);
    call.then(answered, answered);
    return call;
  }

  async deleteMany(filter: Filter<T>): Promise<number> {
    const result = await this.run(() => this.driver.deleteMany(filter as Document));
    return result.deletedCount;
  }

  /** A document as stored: with its compound keys where the server needs them (and its `_id` checked where it is a key). */
  private stored(doc: T): Document {
    if (this.idKeyed) checkIdKeys(this.name, this.indexes, doc as unknown as Record<string, unknown>);
    return this.keys ? this.keys.with(doc as Document) : (doc as Document);
  }

  /** Runs a driver call; `attempted` is the document written, to name a violated unique index. */
  protected async run<R>(op: () => Promise<R>, attempted?: Record<string, unknown>): Promise<R> {
    try {
      return await this.track(op());
    } catch (e) {
      if (isDuplicateKey(e)) throw new DuplicateKeyError(this.name, await this.violatedIndex(e, attempted));
      if (e instanceof MongoError && !(e instanceof MongoServerError)) throw new StoreUnavailableError(e);
      throw e;
    }
  }

  /** MongoDB names the index in keyPattern; other wire servers only in the message, or not at all. */
  private async violatedIndex(e: MongoServerError, attempted?: Record<string, unknown>): Promise<string> {
    const fields = Object.keys((e.keyPattern as Document | undefined) ?? {});
    if (fields.length) return this.indexes.find((i) => i.fields.join() === fields.join())?.name ?? '_id';
    const named = indexNamedIn(
      e.message,
      this.indexes.map((i) => i.name),
    );
    if (named) return named;
    if (!attempted) return '_id';
    const unique = this.indexes.filter((i) => i.unique);
    // An update names only the fields it sets; the rest of a compound key are those stored.
    const whole = unique.some((i) => i.fields.some((f) => !(f in attempted)))
      ? { ...(await this.driver.findOne({ _id: attempted._id } as Document).catch(() => null)), ...attempted }
      : attempted;
    for (const index of unique) {
      if (!index.fields.some((f) => f in attempted)) continue; // not written: not what refused it
      const probe = Object.fromEntries(index.fields.map((f) => [f, whole[f] ?? null]));
      const owner = await this.driver.findOne(probe, { projection: { _id: 1 } }).catch(() => null);
      if (owner && owner._id !== attempted._id) return index.name;
    }
    return '_id';
  }
}

/**
 * A find in one batch, for FerretDB 2 above all. DocumentDB (FerretDB 2.5's backend) runs every
 * find its server may have to resume (any find not asked for a single batch) as a cursor it keeps,
 * and that costs FerretDB and PostgreSQL 15-40 ms of CPU whatever it returns, against 1-2 ms for
 * the same find asked for in a single batch (measured on FerretDB 2.5: a sorted or limited find of
 * 0 to 50 small documents, 20-36 ms; the registry's sweep for due leases, twice a second a node,
 * was most of an idle node's store CPU). So each find asks for its first batch alone, as large as
 * its limit. A batch holds at most 16 MiB and always at least one document when any match, so it
 * is whole when it comes back empty or at its limit; otherwise the `count` command (itself one
 * batch) says whether it was cut, and a cut one is read again through a cursor, as before. MongoDB
 * answers the same calls alike (the driver's findOne is such a find).
 */
export async function firstBatchOnly(
  driver: Driver<Document>,
  filter: Document,
  query: { projection?: Document; sort?: Document; skip?: number; limit?: number } = {},
): Promise<Document[]> {
  const batch = await driver
    .find(filter, { ...query, singleBatch: true, batchSize: query.limit || MAX_BATCH })
    .toArray();
  if (!batch.length || batch.length === query.limit) return batch;
  const matched = await countOf(driver, filter, query);
  return matched <= batch.length ? batch : driver.find(filter, query).toArray();
}

/** The most documents a batch is asked for when a find has no limit (the server's 16 MiB bound it further). */
const MAX_BATCH = 2 ** 31 - 1;

/**
 * How many documents `filter` matches (after `skip`, up to `limit`), by the `count` command. The
 * driver's countDocuments is an aggregation, a cursor FerretDB 2 keeps (see firstBatchOnly):
 * 17-25 ms of its CPU against 1 ms. With a filter, `count` counts the documents it reads, as
 * countDocuments does (its inexact form, with no filter, is not used: an empty one becomes a predicate).
 */
function countOf(
  driver: Driver<Document>,
  filter: Document,
  range: { skip?: number; limit?: number } = {},
): Promise<number> {
  const query = Object.keys(filter).length ? filter : { _id: { $exists: true } }; // with a predicate, counted exactly
  return driver.count(query, {
    ...(range.skip && { skip: range.skip }),
    ...(range.limit !== undefined && { limit: range.limit }),
  });
}

/** The index of the document an ordered insertMany stopped at, when it stopped on a duplicate key. */
function firstDuplicateAt(e: unknown): number | null {
  return duplicateWrites(e)?.[0]?.index ?? null;
}
