import { newBoardRecord } from '../../store/ports/store.js';
// A board's large commits stage their writes in parts beside its header (store/mongo/mongo-boards.ts).
// Parts of an intent a later commit replaced are deleted once a reader mid-way has had its grace,
// and no more often than every half grace: the next commit never waits for that delete (on the
// wire server a delete scans the whole collection), and the current intent's parts always stay.
import { Collection, MongoClient } from 'mongodb';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PARTS_GRACE_MS } from '../../store/mongo/mongo-boards.js';
import { openMongoStore } from '../../store/mongo/index.js';
import type { Store, StoredItem } from '../../store/ports/store.js';
import { dropPrefixed } from '../support/mongo-prefixed.js';
import { unique } from '../support/temp.js';

const uri = inject('mongoUri');
const DB = 'board_test';

/** 150 items: past the inline limit, so each commit is staged. */
const items = (title: string): StoredItem[] =>
  Array.from({ length: 150 }, (_, i) => ({ workId: `W-${i + 1}`, title }) as StoredItem);

describe.skipIf(!uri)('staged parts on the MongoDB wire server', () => {
  const prefix = `${unique('parts')}_`;
  const opened: Store[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    const client = await MongoClient.connect(uri!);
    const db = client.db(DB);
    await dropPrefixed(db, prefix);
    await client.close();
  });

  it('deletes replaced parts after their grace, at most every half grace, off the commit path, keeping the current intent readable', async () => {
    let now = 1_000_000;
    const store = await openMongoStore({ uri: uri!, db: DB, prefix, clock: () => now });
    opened.push(store);
    const boards = store.boards as Store['boards'] & { settled(): Promise<void> };
    const client = await MongoClient.connect(uri!);
    const staged = () =>
      client
        .db(DB)
        .collection(`${prefix}boardStaging`)
        .distinct('v', { boardId: 'b1' })
        .then((vs) => (vs as number[]).sort((a, b) => a - b));
    try {
      await boards.insert({ ...newBoardRecord('b1'), nextWorkSeq: 71 });
      const commit = async (version: number) => {
        expect(
          await boards.commit('b1', version, { lastSeq: version }, { put: items(`v${version + 1}`), removed: [] }),
        ).toBe(true);
        await boards.settled();
      };
      await commit(1); // v2, staged
      await commit(2); // v3 replaces v2's intent
      await commit(3); // v4 replaces v3's
      expect(await staged()).toEqual([2, 3, 4]); // within the grace: every part stays

      now += PARTS_GRACE_MS + 1;
      await commit(4); // v5 replaces v4's: v2's and v3's were replaced more than a grace ago and go
      expect(await staged()).toEqual([4, 5]);

      now += 1000;
      await commit(5); // v6: v4's was replaced a second ago; nothing goes
      expect(await staged()).toEqual([4, 5, 6]);

      now += PARTS_GRACE_MS;
      await commit(6); // v7: v4's and v5's were replaced a grace ago and go
      expect(await staged()).toEqual([6, 7]);
      now += 1000;
      await commit(7); // v8, a second later
      expect(await staged()).toEqual([6, 7, 8]);

      now += PARTS_GRACE_MS - 999;
      await commit(8); // v9: v6's was replaced a grace ago and goes
      expect(await staged()).toEqual([7, 8, 9]);
      now += 1000;
      await commit(9); // v10: v7's is due too, but the last delete was a second ago: it waits
      expect(await staged()).toEqual([7, 8, 9, 10]);
      now += PARTS_GRACE_MS / 2;
      await commit(10); // v11: half a grace after the last delete, v7's goes
      expect(await staged()).toEqual([8, 9, 10, 11]);

      // A delete that hangs does not hold up the next commits.
      const deleteMany = Collection.prototype.deleteMany;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let hung = 0;
      Collection.prototype.deleteMany = function (this: Collection, ...args: Parameters<typeof deleteMany>) {
        if (this.collectionName !== `${prefix}boardStaging`) return deleteMany.apply(this, args);
        hung++;
        return held.then(() => deleteMany.apply(this, args));
      } as typeof deleteMany;
      try {
        now += PARTS_GRACE_MS + 1;
        expect(await boards.commit('b1', 11, { lastSeq: 11 }, { put: items('v12'), removed: [] })).toBe(true);
        await expect.poll(() => hung).toBe(1);
        expect(await boards.commit('b1', 12, { lastSeq: 12 }, { put: items('v13'), removed: [] })).toBe(true);
        expect(await boards.commit('b1', 13, { lastSeq: 13 }, { put: items('v14'), removed: [] })).toBe(true);
        expect(hung).toBe(1);
      } finally {
        release();
        Collection.prototype.deleteMany = deleteMany;
      }
      await boards.settled();
      expect(await staged()).toEqual([11, 12, 13, 14]);

      // The current intent stays readable whatever the clock says.
      now += 10 * PARTS_GRACE_MS;
      const loaded = (await boards.load('b1'))!;
      expect(loaded.record.version).toBe(14);
      expect(loaded.items.map((i) => (i as StoredItem & { title: string }).title)).toEqual(Array(150).fill('v14'));
    } finally {
      await client.close();
    }
  });
});
