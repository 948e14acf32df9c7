// The usage rows on LMDB: an add reads the row and writes the sums inside one write transaction,
// and the embedded store has one writer, so concurrent adds to a row are applied one after another.
import { checkCounts, type UsageCollection, type UsageFields, type UsageRecord } from '../ports/store.js';
import { LmdbCollection, type Row } from './lmdb-collection.js';

export class LmdbUsage extends LmdbCollection<UsageRecord> implements UsageCollection {
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
