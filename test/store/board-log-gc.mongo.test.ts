// On MongoDB a board's item log is insert-only: a version superseded by a later commit is deleted
// GC_GRACE_MS after this process found it superseded (a reader part-way through a read of the log
// still finds it meanwhile), in batches, and never while the grace lasts. A deleted board's
// versions all go, those still waiting to be inserted when it was deleted included.
import { MongoClient, type Document } from 'mongodb';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { openMongoStore } from '../../store/mongo/index.js';
import { GC_GRACE_MS } from '../../store/mongo/mongo-boards.js';
import { itemVersionId, newBoardRecord, type Store, type StoredItem } from '../../store/ports/store.js';
import { dropPrefixed } from '../support/mongo-prefixed.js';
import { unique } from '../support/temp.js';

const uri = inject('mongoUri');
const DB = 'board_test';
/** More than one batch of deletes (GC_BATCH, 500) is superseded at once, and more than one delete takes (1,000 ids). */
const ITEMS = 1_200;

const work = (n: number, title: string): StoredItem & { title: string } => ({ workId: `W-${n}`, title });

describe.skipIf(!uri)('mongo adapter: superseded item versions', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('are deleted once the grace is over, all at the next commit, and not before; the board reads the same', async () => {
    const prefix = `${unique('gc')}_`;
    const client = await MongoClient.connect(uri!);
    const log = client.db(DB).collection<{ _id: string } & Document>(`${prefix}boardItems`);
    let now = Date.UTC(2026, 10, 29, 8);
    const stores: Store[] = [];
    cleanups.push(async () => {
      for (const store of stores) await store.close();
      await dropPrefixed(client.db(DB), prefix);
      await client.close();
    });
    const start = async () => {
      const store = (await openMongoStore({ uri: uri!, db: DB, prefix, clock: () => now })) as Store & {
        boards: Store['boards'] & { settled(): Promise<void> };
      };
      stores.push(store);
      return store;
    };
    const board = unique('board');
    const first = Array.from({ length: ITEMS }, (_, i) => work(i + 1, 'first'));
    const second = first.map((w) => ({ ...w, title: 'second' }));
    const writer = await start();
    await writer.boards.insert(newBoardRecord(board));
    expect(await writer.boards.commit(board, 1, {}, { put: first, removed: [] })).toBe(true);
    await writer.boards.settled();
    // A whole load tells the store which version each item holds; from then on it collects.
    const store = await start();
    await store.boards.load(board);
    expect(await store.boards.commit(board, 2, {}, { put: second, removed: [] })).toBe(true);
    await store.boards.settled();
    const versionsOf = async (v: number) => log.countDocuments({ boardId: board, v });
    expect([await versionsOf(2), await versionsOf(3)]).toEqual([ITEMS, ITEMS]);

    // Within the grace a commit deletes nothing.
    now += GC_GRACE_MS - 1000;
    expect(await store.boards.commit(board, 3, {}, { put: [work(1, 'third')], removed: [] })).toBe(true);
    await store.boards.settled();
    expect([await versionsOf(2), await versionsOf(3)]).toEqual([ITEMS, ITEMS]);

    // Past it the next commit deletes every version superseded by the second commit, at once.
    now += 2000;
    expect(await store.boards.commit(board, 4, {}, { put: [work(2, 'fourth')], removed: [] })).toBe(true);
    await store.boards.settled();
    expect(await versionsOf(2)).toBe(0);
    // Those the third and fourth commits superseded a moment ago stay for their own grace.
    expect(
      await log.countDocuments({ _id: { $in: [itemVersionId(board, 3, 'W-1'), itemVersionId(board, 3, 'W-2')] } }),
    ).toBe(2);
    const loaded = await (await start()).boards.load(board);
    const titles = new Map(loaded!.items.map((i) => [i.workId, (i as StoredItem & { title: string }).title]));
    expect(titles.size).toBe(ITEMS);
    expect([titles.get('W-1'), titles.get('W-2'), titles.get('W-3'), titles.get(`W-${ITEMS}`)]).toEqual([
      'third',
      'fourth',
      'second',
      'second',
    ]);
  });

  it('leave nothing behind a board deleted right after a commit: its inserts waiting to go finish first', async () => {
    const prefix = `${unique('gc')}_`;
    const client = await MongoClient.connect(uri!);
    const store = await openMongoStore({ uri: uri!, db: DB, prefix });
    cleanups.push(async () => {
      await store.close();
      await dropPrefixed(client.db(DB), prefix);
      await client.close();
    });
    const board = unique('board');
    await store.boards.insert(newBoardRecord(board));
    // Two versions: an insert waiting for its batch (a timer) when the board is deleted.
    expect(await store.boards.commit(board, 1, {}, { put: [work(1, 'one'), work(2, 'two')], removed: [] })).toBe(true);
    expect(await store.boards.delete(board)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200)); // past the batch's timer, were it still waiting
    expect(await client.db(DB).collection(`${prefix}boardItems`).countDocuments({ boardId: board })).toBe(0);
  });
});
