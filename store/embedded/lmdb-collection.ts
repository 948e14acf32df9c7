// One collection on LMDB. Documents live in their own database keyed by _id; each declared index
// is an ordered key space ([...values] → _id when unique, [...values, _id] → null otherwise: the
// key holds the _id; earlier versions repeated it as the value, which reads the same) written in
// the same transaction as its document, so finds read a key range instead of scanning.
import { getLastVersion, type Database, type Key as LmdbKey, type RangeOptions } from 'lmdb';
import {
  DuplicateKeyError,
  type Changes,
  type Collection,
  type Doc,
  type Filter,
  type FindOptions,
  type IndexSpec,
  type Selected,
} from '../ports/store.js';
import { HIGH, keyValue, planFor, type Plan } from './plan.js';
import { matches, order } from './query.js';
import { DIRECT, type Writes } from './ready-writes.js';
import type { Writer } from './writer.js';

export type Row = Record<string, unknown>;
export type Key = LmdbKey[];

export interface CollectionDbs {
  docs: Database<Row, string>;
  indexes: { spec: IndexSpec; db: Database<string | null, Key> }[];
}

const DELETE_CHUNK = 500;

const indexKey = (spec: IndexSpec, doc: Row): Key => {
  const values = spec.fields.map((f) => keyValue(doc[f]));
  return spec.unique ? values : [...values, doc._id as string];
};
/** What an index key points at: the _id where the key does not hold it. */
const indexValue = (spec: IndexSpec, doc: Row): string | null => (spec.unique ? (doc._id as string) : null);
/** The _id an index entry names. */
const indexedId = (spec: IndexSpec, key: Key, value: string | null): string =>
  spec.unique ? (value as string) : (key.at(-1) as string);
const sameKey = (a: Key, b: Key): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

export class LmdbCollection<T extends Doc> implements Collection<T> {
  private readonly specs: IndexSpec[];

  constructor(
    protected readonly name: string,
    protected readonly dbs: CollectionDbs,
    protected readonly writer: Writer,
  ) {
    this.specs = dbs.indexes.map((i) => i.spec);
  }

  async get(id: string): Promise<T | null> {
    this.writer.check();
    return this.doc(id) as T | null;
  }

  versionOf(id: string): number | null {
    this.writer.check();
    // The version rides in LMDB's entry header: nothing is decoded.
    return this.dbs.docs.getBinaryFast(id) === undefined ? null : getLastVersion();
  }

  async findOne(filter: Filter<T>): Promise<T | null> {
    return (await this.find(filter, { limit: 1 }))[0] ?? null;
  }

  async find(filter: Filter<T>, options: FindOptions<T> = {}): Promise<T[]> {
    this.writer.check();
    return this.query(filter, options, null) as T[];
  }

  async select<K extends keyof T & string>(
    filter: Filter<T>,
    fields: readonly K[],
    options: FindOptions<T> = {},
  ): Promise<Selected<T, K>[]> {
    this.writer.check();
    return this.query(filter, options, fields) as Selected<T, K>[];
  }

  async count(filter: Filter<T>): Promise<number> {
    this.writer.check();
    const plan = planFor(filter, this.specs);
    if ((plan.kind === 'index' || plan.kind === 'points') && plan.exact) {
      const db = this.indexDb(plan.index);
      return keyRanges(plan).reduce((n, range) => n + db.getKeysCount(range), 0);
    }
    let n = 0;
    for (const _match of this.matching(plan, filter as Row)) n++;
    return n;
  }

  async insert(doc: T): Promise<void> {
    const row = structuredClone(doc) as unknown as Row;
    await this.writer.write(() => {
      if (this.dbs.docs.doesExist(row._id as string)) throw new DuplicateKeyError(this.name, '_id');
      this.store(row, null);
    });
  }

  async insertMissing(docs: readonly T[]): Promise<void> {
    await this.writer.write(() => this.insertMissingWithin(docs)); // not copied: see the port
  }

  /** insertMissing's writes, inside a write transaction already open (a board commit that logs its events). */
  insertMissingWithin(docs: readonly T[]): void {
    for (const row of docs as unknown as readonly Row[]) {
      if (this.dbs.docs.doesExist(row._id as string) || this.takenIndex(row)) continue;
      this.put(row, null);
    }
  }

  /**
   * Writes documents the caller knows are new (no _id nor unique key of theirs is stored), inside a
   * write transaction already open or to `to`: nothing is read first.
   */
  insertNewWithin(docs: readonly T[], to: Writes = DIRECT): void {
    for (const row of docs as unknown as readonly Row[]) this.put(row, null, to);
  }

  update(
    id: string,
    expectedVersion: number,
    changes: Changes<T>,
    unset: ReadonlyArray<keyof Changes<T>> = [],
  ): Promise<T | null> {
    const set = structuredClone(changes) as Row;
    return this.writer.write(() => {
      const current = this.dbs.docs.get(id);
      if (!current || current.version !== expectedVersion) return null;
      const next: Row = { ...current, ...set, version: expectedVersion + 1 };
      for (const field of unset) delete next[field as string];
      this.store(next, current);
      return next as T;
    });
  }

  delete(id: string, expectedVersion?: number): Promise<boolean> {
    return this.writer.write(() => {
      const current = this.dbs.docs.get(id);
      if (!current || (expectedVersion !== undefined && current.version !== expectedVersion)) return false;
      this.remove(current);
      return true;
    });
  }

  async deleteMany(filter: Filter<T>): Promise<number> {
    this.writer.check();
    const ids = [...this.matching(planFor(filter, this.specs), filter as Row)].map((m) => m.id);
    let deleted = 0;
    for (let i = 0; i < ids.length; i += DELETE_CHUNK) {
      deleted += await this.writer.write(() => {
        let n = 0;
        for (const id of ids.slice(i, i + DELETE_CHUNK)) {
          const current = this.dbs.docs.get(id);
          if (current && matches(current, filter as Row)) n += (this.remove(current), 1);
        }
        return n;
      });
    }
    return deleted;
  }

  private indexDb(spec: IndexSpec): Database<string | null, Key> {
    return this.dbs.indexes.find((i) => i.spec === spec)!.db;
  }

  private doc(id: string): Row | null {
    return this.dbs.docs.get(id) ?? null;
  }

  /**
   * The matching documents in plan order, each with what was read to decide: the stored
   * document (`whole`), or, when the index holds every filtered field, only the key's fields.
   */
  private *matching(plan: Plan, filter: Row): Generator<{ id: string; row: Row; whole: boolean }> {
    if (plan.kind === 'ids') {
      for (const id of plan.ids) {
        const row = this.dbs.docs.get(id);
        if (row && matches(row, filter)) yield { id, row, whole: true };
      }
      return;
    }
    if (plan.kind === 'primary') {
      const range = plan.reverse
        ? { start: plan.end ?? HIGH, end: plan.start, reverse: true, inclusiveEnd: true }
        : { start: plan.start, end: plan.end };
      for (const { key, value } of this.dbs.docs.getRange(range))
        if (matches(value, filter)) yield { id: key, row: value, whole: true };
      return;
    }
    const { index } = plan;
    const fromKey = Object.keys(filter).every((f) => f === '_id' || index.fields.includes(f));
    for (const range of keyRanges(plan))
      for (const { key, value } of this.indexDb(index).getRange(range)) {
        // LMDB's key encoding reads a one-element array back as its element.
        const parts = Array.isArray(key) ? key : [key];
        const id = indexedId(index, parts, value);
        if (fromKey) {
          const partial: Row = { _id: id };
          index.fields.forEach((f, i) => (partial[f] = parts[i]));
          if (matches(partial, filter)) yield { id, row: partial, whole: false };
        } else {
          const row = this.dbs.docs.get(id);
          if (row && matches(row, filter)) yield { id, row, whole: true };
        }
      }
  }

  /** find (`fields` null) and select: skip and limit are applied while reading when the plan's order is the one asked for. */
  private query(filter: Filter<T>, options: FindOptions<T>, fields: readonly string[] | null): Row[] {
    const plan = planFor(filter, this.specs, options);
    const sortFields = plan.ordered ? [] : (options.sort ?? [['_id', 1]]).map(([f]) => f as string);
    const need = fields && [...fields, ...sortFields];
    const read = ({ id, row, whole }: { id: string; row: Row; whole: boolean }): Row => {
      if (whole) return row;
      return need && need.every((f) => f in row) ? row : this.doc(id)!;
    };
    const pick = (row: Row): Row =>
      fields ? Object.fromEntries(['_id', ...fields].filter((f) => f in row).map((f) => [f, row[f]])) : row;
    const skip = options.skip ?? 0;
    const limit = options.limit ?? Infinity;
    if (!plan.ordered) {
      const rows = [...this.matching(plan, filter as Row)].map(read);
      return order(rows, options as FindOptions<Row>).map(pick);
    }
    const out: Row[] = [];
    let seen = 0;
    for (const match of this.matching(plan, filter as Row)) {
      if (out.length >= limit) break;
      if (seen++ >= skip) out.push(pick(read(match)));
    }
    return out;
  }

  /** The name of a unique index another document already holds `row`'s key in, if any. */
  private takenIndex(row: Row): string | null {
    for (const { spec, db } of this.dbs.indexes) {
      if (!spec.unique) continue;
      const owner = db.get(indexKey(spec, row));
      if (owner !== undefined && owner !== row._id) return spec.name;
    }
    return null;
  }

  /**
   * Writes `row` over `previous` once no other document holds one of its unique keys (else throws:
   * the transaction aborts, or nothing made ready is queued).
   */
  protected store(row: Row, previous: Row | null, to: Writes = DIRECT): void {
    const taken = this.takenIndex(row);
    if (taken) throw new DuplicateKeyError(this.name, taken);
    this.put(row, previous, to);
  }

  /** Writes `row` over `previous`, unique keys already checked: index keys that moved are replaced. */
  private put(row: Row, previous: Row | null, to: Writes = DIRECT): void {
    const id = row._id as string;
    for (const { spec, db } of this.dbs.indexes) {
      const next = indexKey(spec, row);
      const before = previous && indexKey(spec, previous);
      if (before && sameKey(before, next)) continue;
      if (before) to.remove(db, before);
      to.put(db, next, indexValue(spec, row));
    }
    to.put(this.dbs.docs, id, row, row.version as number);
  }

  /**
   * Builds the indexes not yet marked built in `meta` from the stored documents (an index declared
   * after its collection held documents would otherwise miss them), then marks them. Runs at open,
   * before anything else writes.
   */
  async buildMissingIndexes(meta: Database, writer: Writer): Promise<string[]> {
    const built: string[] = [];
    for (const { spec, db } of this.dbs.indexes) {
      const mark = `index:${this.name}.${spec.name}`;
      if (meta.get(mark) === true) continue;
      let chunk: Row[] = [];
      let count = 0;
      const flush = async () => {
        const rows = chunk;
        chunk = [];
        await writer.write(() => {
          for (const row of rows) db.put(indexKey(spec, row), indexValue(spec, row));
        });
      };
      for (const { value } of this.dbs.docs.getRange({})) {
        chunk.push(value);
        count++;
        if (chunk.length === DELETE_CHUNK) await flush();
      }
      await flush();
      await writer.write(() => meta.put(mark, true));
      if (count) built.push(`${this.name}.${spec.name}`);
    }
    return built;
  }

  /** Removes `row` and its index keys (inside a write); a collection with more beside its documents removes that too. */
  protected remove(row: Row): void {
    for (const { spec, db } of this.dbs.indexes) db.remove(indexKey(spec, row));
    this.dbs.docs.remove(row._id as string);
  }
}

/** The index ranges an index plan reads, in its order: one for a range, one a value for `$in`. */
function keyRanges(plan: Extract<Plan, { kind: 'index' | 'points' }>): RangeOptions[] {
  if (plan.kind === 'points') return plan.prefixes.map((prefix) => ({ start: prefix, end: [...prefix, HIGH] }));
  return [
    plan.reverse
      ? { start: plan.end, end: plan.start, reverse: true, inclusiveEnd: true, exclusiveStart: true }
      : { start: plan.start, end: plan.end },
  ];
}
