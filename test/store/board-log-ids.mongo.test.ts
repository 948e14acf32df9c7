// The boards' item log on MongoDB is read by `_id` range alone: each version's `_id` is its board,
// its version (ordered) and its work id (`itemVersionId`), so no secondary index is kept per inserted
// version. Versions an earlier version of the adapter wrote under `<board>:<work id>:<v>`, beside its
// `boardId_v` index, still load.
import { MongoClient, MongoServerError, type Document } from 'mongodb';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { openMongoStore } from '../../store/mongo/index.js';
import { itemVersionId, newBoardRecord, type Store, type StoredItem } from '../../store/ports/store.js';
import { dropPrefixed } from '../support/mongo-prefixed.js';
import { unique } from '../support/temp.js';

const uri = inject('mongoUri');
const DB = 'board_test';

type Work = StoredItem & { title: string };
const work = (n: number, title: string): Work => ({ workId: `W-${n}`, title });
const byWorkId = (items: StoredItem[]) => [...items].sort((a, b) => a.workId.localeCompare(b.workId));

describe.skipIf(!uri)('mongo adapter: the item log keyed by board, version and work id', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A client and a store of the test's own collections, closed and dropped after it. */
  async function open(prefix = `${unique('t')}_`) {
    const client = await MongoClient.connect(uri!);
    const db = client.db(DB);
    const stores: Store[] = [];
    cleanups.push(async () => {
      for (const store of stores) await store.close();
      await dropPrefixed(db, prefix);
      await client.close();
    });
    const log = db.collection<{ _id: string } & Document>(`${prefix}boardItems`);
    const start = async () => {
      const store = await openMongoStore({ uri: uri!, db: DB, prefix });
      stores.push(store);
      return store as Store & { boards: Store['boards'] & { settled(): Promise<void> } };
    };
    const indexes = async () => (await log.listIndexes().toArray()).map((i) => i.name as string).sort();
    return { db, log, start, indexes, prefix };
  }

  it('keeps no index but the _id’s, reads ranges of versions by it, and refuses a second version of one key', async () => {
    const { log, start, indexes } = await open();
    const store = await start();
    // Versions past a power of ten sort after the ones below it (b10 after a9): 12 commits, each of its own item.
    const board = unique('board');
    const commits = Array.from({ length: 12 }, (_, i) => work(i + 1, `v${i + 2}`));
    await store.boards.insert(newBoardRecord(board));
    for (const [i, item] of commits.entries())
      expect(await store.boards.commit(board, i + 1, { lastSeq: i + 1 }, { put: [item], removed: [] })).toBe(true);
    // A board whose id extends this one's past a ':' lies in its range of ids; it is not read as this one.
    const other = `${board}:b`;
    await store.boards.insert(newBoardRecord(other));
    expect(await store.boards.commit(other, 1, {}, { put: [work(7, 'other')], removed: [] })).toBe(true);
    await store.boards.settled();

    expect(await indexes()).toEqual(['_id_']);
    const stored = await log.find({ boardId: board }).toArray();
    expect(stored).toHaveLength(12);
    for (const doc of stored) expect(doc._id).toBe(itemVersionId(board, doc.v as number, doc.workId as string));

    const loaded = await (await start()).boards.load(board);
    expect(byWorkId(loaded!.items)).toEqual(byWorkId(commits));
    const reader = await start();
    await reader.boards.load(board);
    // Version n + 1 wrote commits[n - 1].
    for (const since of [1, 7, 8, 9, 10, 12, 13]) {
      const changes = await reader.boards.changesSince(board, since);
      expect([since, byWorkId(changes!.items)]).toEqual([since, byWorkId(commits.slice(since - 1))]);
    }
    expect((await reader.boards.load(other))!.items).toEqual([work(7, 'other')]);

    // The log inserts a version once: a second document of the same board, version and work id is refused.
    const again = { _id: itemVersionId(board, 13, 'W-12'), boardId: board, workId: 'W-12', v: 13, item: work(1, 'x') };
    const refused = await log.insertOne(again).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MongoServerError);
    expect((refused as MongoServerError).code).toBe(11000);
    expect(await log.countDocuments({ boardId: board, v: 13 })).toBe(1);

    // A board deleted takes its versions along, and no other board's.
    expect(await store.boards.delete(board)).toBe(true);
    expect(await log.countDocuments({ boardId: board })).toBe(0);
    expect(await log.countDocuments({ boardId: other })).toBe(1);
  });

  it('loads and reads a board an earlier version logged under `<board>:<work id>:<v>`, and drops its index at start', async () => {
    const { db, log, start, indexes, prefix } = await open();
    // As an earlier version left it: the {boardId, v} index, and the versions under their old ids.
    const board = unique('board');
    await log.createIndex({ boardId: 1, v: 1 }, { name: 'boardId_v' });
    const old = (workId: string, v: number, item: StoredItem | null) => ({
      _id: `${board}:${workId}:${v}`,
      boardId: board,
      workId,
      v,
      item,
    });
    await log.insertMany([
      old('W-1', 2, work(1, 'v2')),
      old('W-2', 2, work(2, 'v2')),
      old('W-3', 2, work(3, 'v2')),
      old('W-1', 3, work(1, 'v3')),
      old('W-3', 4, null),
      old('W-10', 4, work(10, 'v4')),
    ]);
    await db
      .collection<Document>(`${prefix}boards`)
      .insertOne({ ...newBoardRecord(board, 4), entries: 3, layout: 2, intent: null } as Document);

    const store = await start();
    expect(await indexes()).toEqual(['_id_']);
    const before = await store.boards.load(board);
    expect(before!.record.version).toBe(4);
    expect(byWorkId(before!.items)).toEqual([work(1, 'v3'), work(10, 'v4'), work(2, 'v2')]);

    // Commits over it land under the new ids, and every reader sees both shapes together.
    expect(await store.boards.commit(board, 4, { entries: 2 }, { put: [work(2, 'v5')], removed: ['W-10'] })).toBe(true);
    expect(await store.boards.commit(board, 5, { entries: 3 }, { put: [work(4, 'v6')], removed: [] })).toBe(true);
    await store.boards.settled();
    expect(await log.findOne({ _id: itemVersionId(board, 5, 'W-2') } as Document)).toMatchObject({ v: 5 });
    const reader = await start();
    expect(byWorkId((await reader.boards.load(board))!.items)).toEqual([work(1, 'v3'), work(2, 'v5'), work(4, 'v6')]);
    const changes = await store.boards.changesSince(board, 5);
    expect(changes!.items).toEqual([work(4, 'v6')]);
    expect(changes!.removed).toEqual([]);
    expect((await store.boards.changesSince(board, 4))!.removed).toEqual(['W-10']);

    // Deleting the board deletes its versions of both shapes.
    expect(await store.boards.delete(board)).toBe(true);
    expect(await log.countDocuments({ boardId: board })).toBe(0);
  });
});
