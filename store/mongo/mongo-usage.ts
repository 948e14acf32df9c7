// The usage rows on MongoDB: an add is one upsert, `$inc` on the counters and the version with
// `$setOnInsert` of the row's fields, so the server sums concurrent adds and says which created the
// row. FerretDB 2 does not apply such upserts atomically (see `upserts`): there an add is an update,
// and an insert when the update found no row.
import type { Collection as Driver, Document } from 'mongodb';
import {
  checkCounts,
  DuplicateKeyError,
  type IndexSpec,
  type UsageCollection,
  type UsageFields,
  type UsageRecord,
} from '../ports/store.js';
import type { CompoundKeys } from './compound-unique.js';
import { MongoCollection } from './mongo-collection.js';

export class MongoUsage extends MongoCollection<UsageRecord> implements UsageCollection {
  constructor(
    name: string,
    indexes: readonly IndexSpec[],
    driver: Driver<Document>,
    keys: CompoundKeys | null,
    /**
     * Whether the server applies concurrent upserts of one missing document as one insert and
     * updates after it (MongoDB). FerretDB 2.5 on DocumentDB does not: of 50 concurrent upserts
     * of a new row, several may each report that they created it, and the counts of all but the
     * last of those, with the updates between them, are lost (17 rounds of 20 lost counts, measured).
     */
    private readonly upserts: boolean,
  ) {
    super(name, indexes, driver, [], keys);
  }

  async add(id: string, fields: UsageFields, counts: Readonly<Record<string, number>>): Promise<boolean> {
    checkCounts(counts);
    const inc: Document = { version: 1 };
    for (const [c, n] of Object.entries(counts)) inc[`counts.${c}`] = n;
    const { day, scope, key } = fields;
    if (this.upserts) {
      // A row with no counters still gets its counts object, as the embedded store writes it.
      const update: Document = {
        $inc: inc,
        $setOnInsert: Object.keys(counts).length ? { day, scope, key } : { day, scope, key, counts: {} },
      };
      const upsert = () => this.driver.updateOne({ _id: id } as Document, update, { upsert: true });
      try {
        return (await this.run(upsert)).upsertedCount === 1;
      } catch (e) {
        // Before 4.2, MongoDB may refuse the second of two upserts that both found the row missing
        // on _id (later versions retry it themselves); sent again, it finds the row and adds to it.
        if (!(e instanceof DuplicateKeyError)) throw e;
        return (await this.run(upsert)).upsertedCount === 1;
      }
    }
    // One command for a stored row; two for a new one (the update finds none, the insert makes it);
    // an insert another add made first is refused on _id, and the update then finds that row.
    const update = () => this.driver.updateOne({ _id: id } as Document, { $inc: inc });
    const row: UsageRecord = { _id: id, version: 1, day, scope, key, counts: { ...counts } };
    for (;;) {
      if ((await this.run(update)).matchedCount === 1) return false;
      try {
        await this.insert(row);
        return true;
      } catch (e) {
        if (!(e instanceof DuplicateKeyError)) throw e;
      }
    }
  }
}
