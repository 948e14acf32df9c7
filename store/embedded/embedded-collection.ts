// One collection held in memory; every change is journaled and acknowledged only once durable.
import { DuplicateKeyError, type Changes, type Collection, type Doc, type Filter, type FindOptions, type IndexSpec, type Selected } from '../ports/store.js';
import type { JournalOp } from './journal.js';
import { matches, order } from './query.js';

export interface JournalSink {
  append(ops: readonly JournalOp[]): Promise<void>;
  settled(): Promise<void>;
}

export interface JournalPatch {
  set: Record<string, unknown>;
  version: number;
}

/** A copy of `doc` with each dotted path set; only the objects along each path are copied. */
function applyPatch<T extends Doc>(doc: T, set: Record<string, unknown>, version: number): T {
  const next = { ...doc, version } as unknown as Record<string, unknown>;
  for (const [path, value] of Object.entries(set)) {
    const keys = path.split('.');
    let at = next;
    for (const key of keys.slice(0, -1)) {
      const child = at[key];
      at[key] = child && typeof child === 'object' ? { ...(child as Record<string, unknown>) } : {};
      at = at[key] as Record<string, unknown>;
    }
    at[keys.at(-1)!] = value;
  }
  return next as unknown as T;
}

export class EmbeddedCollection<T extends Doc> implements Collection<T> {
  readonly docs = new Map<string, T>();
  private readonly unique: { spec: IndexSpec; keys: Map<string, string> }[];

  constructor(
    private readonly name: string,
    indexes: readonly IndexSpec[],
    private readonly sink: JournalSink,
  ) {
    this.unique = indexes.filter((i) => i.unique).map((spec) => ({ spec, keys: new Map() }));
  }

  async get(id: string): Promise<T | null> {
    await this.sink.settled();
    const doc = this.docs.get(id);
    return doc ? structuredClone(doc) : null;
  }

  async findOne(filter: Filter<T>): Promise<T | null> {
    return (await this.find(filter, { limit: 1 }))[0] ?? null;
  }

  async find(filter: Filter<T>, options?: FindOptions<T>): Promise<T[]> {
    await this.sink.settled();
    return order(this.scan(filter), options).map((d) => structuredClone(d));
  }

  async select<K extends keyof T & string>(filter: Filter<T>, fields: readonly K[], options?: FindOptions<T>): Promise<Selected<T, K>[]> {
    await this.sink.settled();
    return order(this.scan(filter), options).map((d) => structuredClone(Object.fromEntries(['_id', ...fields].map((f) => [f, (d as Record<string, unknown>)[f]]))) as Selected<T, K>);
  }

  async count(filter: Filter<T>): Promise<number> {
    await this.sink.settled();
    return this.scan(filter).length;
  }

  async insert(doc: T): Promise<void> {
    if (this.docs.has(doc._id)) throw new DuplicateKeyError(this.name, '_id');
    const copy = structuredClone(doc);
    this.put(copy, null);
    await this.sink.append([[this.name, copy._id, copy]]);
  }

  async insertMissing(docs: readonly T[]): Promise<void> {
    const entries: [string, string, T][] = [];
    for (const doc of docs) {
      if (this.docs.has(doc._id)) continue;
      const copy = structuredClone(doc);
      this.put(copy, null);
      entries.push([this.name, copy._id, copy]);
    }
    if (entries.length) await this.sink.append(entries);
  }

  async update(id: string, expectedVersion: number, changes: Changes<T>, unset: ReadonlyArray<keyof Changes<T>> = []): Promise<T | null> {
    const current = this.docs.get(id);
    if (!current || current.version !== expectedVersion) return null;
    const next = { ...current, ...structuredClone(changes), version: current.version + 1 } as T;
    for (const field of unset) delete (next as Record<string, unknown>)[field as string];
    this.put(next, current);
    await this.sink.append([[this.name, id, next]]);
    return structuredClone(next);
  }

  async patch(id: string, expectedVersion: number, set: Record<string, unknown>): Promise<T | null> {
    const current = this.docs.get(id);
    if (!current || current.version !== expectedVersion) return null;
    const values = structuredClone(set);
    const next = applyPatch(current, values, current.version + 1);
    this.put(next, current);
    await this.sink.append([[this.name, id, null, { set: values, version: next.version }]]);
    return structuredClone(next);
  }

  async delete(id: string, expectedVersion?: number): Promise<boolean> {
    const current = this.docs.get(id);
    if (!current || (expectedVersion !== undefined && current.version !== expectedVersion)) return false;
    this.remove(current);
    await this.sink.append([[this.name, id, null]]);
    return true;
  }

  async deleteMany(filter: Filter<T>): Promise<number> {
    const victims = this.scan(filter);
    if (!victims.length) return 0;
    for (const doc of victims) this.remove(doc);
    await this.sink.append(victims.map((d) => [this.name, d._id, null] as const));
    return victims.length;
  }

  /** Applies a recovered operation without journaling it. */
  replay(id: string, doc: T | null, patch?: JournalPatch): void {
    const current = this.docs.get(id) ?? null;
    if (patch) {
      if (current) this.put(applyPatch(current, patch.set, patch.version), current);
      return;
    }
    if (current) this.remove(current);
    if (doc) this.put(doc, null);
  }

  private scan(filter: Filter<T>): T[] {
    const out: T[] = [];
    for (const doc of this.docs.values()) if (matches(doc, filter)) out.push(doc);
    return out;
  }

  private keyOf(spec: IndexSpec, doc: T): string {
    return JSON.stringify(spec.fields.map((f) => (doc as Record<string, unknown>)[f] ?? null));
  }

  /** Checks every unique index before touching any, so a refused write changes nothing. */
  private put(doc: T, previous: T | null): void {
    for (const { spec, keys } of this.unique) {
      const owner = keys.get(this.keyOf(spec, doc));
      if (owner !== undefined && owner !== doc._id) throw new DuplicateKeyError(this.name, spec.name);
    }
    if (previous) for (const { spec, keys } of this.unique) keys.delete(this.keyOf(spec, previous));
    for (const { spec, keys } of this.unique) keys.set(this.keyOf(spec, doc), doc._id);
    this.docs.set(doc._id, doc);
  }

  private remove(doc: T): void {
    for (const { spec, keys } of this.unique) keys.delete(this.keyOf(spec, doc));
    this.docs.delete(doc._id);
  }
}
