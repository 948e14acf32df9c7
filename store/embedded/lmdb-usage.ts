// The usage rows on LMDB: an add reads the row and writes the sums inside one write transaction,
// and the embedded store has one writer, so concurrent adds to a row are applied one after another.
// A row whose _id spells its day, scope and key (`<day>:<scope>:<key>`, as src/admin/usage.ts names
// every row) is stored without them, and without its _id (the entry's key): they are put back on
// every read. Rows stored whole (by earlier versions, or under another _id) read as they are.
import type { Database } from 'lmdb';
import { checkCounts, type UsageCollection, type UsageFields, type UsageRecord } from '../ports/store.js';
import { LmdbCollection, type CollectionDbs, type Row } from './lmdb-collection.js';
import type { Writer } from './writer.js';

const SCOPE = /:(account|board|address|principal|platform):/;

/** The day, scope and key an _id spells, or null when it names no scope. */
export function usageFieldsOf(id: string): UsageFields | null {
  const m = SCOPE.exec(id);
  if (!m) return null;
  return { day: id.slice(0, m.index), scope: m[1] as UsageFields['scope'], key: id.slice(m.index + m[0].length) };
}

/** The row as stored: without its _id and the fields it spells back exactly, else whole. */
function lean(row: Row): Row {
  const spelled = usageFieldsOf(row._id as string);
  if (!spelled || spelled.day !== row.day || spelled.scope !== row.scope || spelled.key !== row.key) return row;
  const { _id: _spells, day: _day, scope: _scope, key: _key, ...rest } = row;
  return rest;
}

/** The row as read: a lean one with its _id and fields put back (in the order a whole one has them). */
function whole(id: string, stored: Row | undefined): Row | undefined {
  if (stored === undefined || '_id' in stored) return stored;
  const { version, ...rest } = stored;
  return { _id: id, version, ...usageFieldsOf(id), ...rest };
}

/** The collection's documents database as LmdbCollection uses it, lean rows written and read whole. */
function leanDocs(docs: Database<Row, string>): Database<Row, string> {
  return Object.assign(Object.create(docs) as Database<Row, string>, {
    get: (id: string) => whole(id, docs.get(id)),
    getRange: (options: Parameters<Database<Row, string>['getRange']>[0]) =>
      docs.getRange(options).map(({ key, value }) => ({ key, value: whole(key, value)! })),
    put: (id: string, row: Row, version: number) => docs.put(id, lean(row), version),
    remove: (id: string) => docs.remove(id),
    doesExist: (id: string) => docs.doesExist(id),
    getBinaryFast: (id: string) => docs.getBinaryFast(id),
  });
}

export class LmdbUsage extends LmdbCollection<UsageRecord> implements UsageCollection {
  constructor(name: string, dbs: CollectionDbs, writer: Writer) {
    super(name, { ...dbs, docs: leanDocs(dbs.docs) }, writer);
  }

  async add(id: string, fields: UsageFields, counts: Readonly<Record<string, number>>): Promise<boolean> {
    checkCounts(counts);
    const { day, scope, key } = fields;
    const adds = { ...counts };
    return this.writer.write(() => {
      const current = this.dbs.docs.get(id);
      if (!current) {
        this.store({ _id: id, version: 1, day, scope, key, counts: adds }, null);
        return true;
      }
      const sums = { ...(current.counts as Record<string, number>) };
      for (const [c, n] of Object.entries(adds)) sums[c] = (Object.hasOwn(sums, c) ? sums[c]! : 0) + n;
      const next: Row = { ...current, counts: sums, version: (current.version as number) + 1 };
      this.store(next, current);
      return false;
    });
  }
}
