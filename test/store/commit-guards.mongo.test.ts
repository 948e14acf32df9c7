// On a wire server without atomic conditional updates (FerretDB 1.x), each board commit holds a
// guard named by its version (store/mongo/mongo-collection.ts). A commit that landed leaves its
// guard moot (the version is past for good), and moot guards are deleted together a moment later:
// one delete a second rather than one a commit. A guard that is not moot is deleted at once, and a
// moot one still refuses a committer at its version. On MongoDB there are no guards.
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openMongoStore, type MongoStoreOptions } from '../../store/mongo/index.js';
import type { Store, StoredItem } from '../../store/ports/store.js';
import { unique } from '../support/temp.js';
import { until } from '../support/until.js';

const uri = inject('mongoUri');
const DB = 'board_test';

describe.skipIf(!uri)('commit guards on the MongoDB wire server', () => {
  const prefix = `${unique('guards')}_`;
  let client: MongoClient;
  let ferret: boolean;
  const opened: Store[] = [];
  const open = async (options: Partial<MongoStoreOptions> = {}) => {
    const store = await openMongoStore({ uri: uri!, db: DB, prefix, ...options });
    opened.push(store);
    return store;
  };
  const held = async () =>
    (await client.db(DB).collection(`${prefix}commit_guards`).find({}).toArray()).map((g) => String(g._id)).sort();
  const item = (n: number): StoredItem => ({ workId: `W-${n}` }) as StoredItem;
  const board = (store: Store, id: string) =>
    store.boards.insert({ _id: id, version: 1, nextWorkSeq: 1, nextFencingToken: 1, lastSeq: 0, nextDeadline: null });
  const settled = (store: Store) => (store.boards as Store['boards'] & { settled(): Promise<void> }).settled();

  beforeAll(async () => {
    client = await MongoClient.connect(uri!);
    ferret = 'ferretdbVersion' in (await client.db(DB).admin().command({ buildInfo: 1 }));
  });
  afterAll(async () => {
    for (const store of opened) await store.close();
    const db = client.db(DB);
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray())
      if (name.startsWith(prefix))
        await db
          .collection(name)
          .drop()
          .catch(() => undefined);
    await client.close();
  });

  it('keeps the guards of landed commits for one delete together, deletes a losing one at once, and a moot one still refuses its version', async () => {
    // A release delay no test run reaches: what is held is up to the commits alone.
    const store = await open({ guardReleaseMs: 600_000 });
    await board(store, 'b1');
    expect(await store.boards.commit('b1', 1, { lastSeq: 1 }, { put: [item(1)], removed: [] })).toBe(true);
    expect(await store.boards.commit('b1', 2, { lastSeq: 2 }, { put: [item(2)], removed: [] })).toBe(true);
    expect(await held()).toEqual(ferret ? ['boards/b1/1', 'boards/b1/2'] : []);

    // A committer that still believes version 2 loses and writes nothing; one ahead of the board
    // loses too (nothing matched), and its guard, not moot, goes at once.
    expect(await store.boards.commit('b1', 2, { lastSeq: 99 }, { put: [item(99)], removed: [] })).toBe(false);
    expect(await store.boards.commit('b1', 7, { lastSeq: 98 }, { put: [item(98)], removed: [] })).toBe(false);
    expect(await held()).toEqual(ferret ? ['boards/b1/1', 'boards/b1/2'] : []);
    const loaded = (await store.boards.load('b1'))!;
    expect(loaded.record.version).toBe(3);
    expect(loaded.record.lastSeq).toBe(2);
    expect(loaded.items.map((i) => i.workId).sort()).toEqual(['W-1', 'W-2']);

    await settled(store);
    expect(await held()).toEqual([]);

    // Once a hundred wait they go without the timer: the collection stays small under a busy board.
    for (let v = 3; v < 153; v++)
      expect(await store.boards.commit('b1', v, { lastSeq: v }, { put: [item(v)], removed: [] })).toBe(true);
    await until(async () => (await held()).length === (ferret ? 50 : 0), 10_000);
    await settled(store);
    expect(await held()).toEqual([]);
    expect((await store.boards.load('b1'))!.record.version).toBe(153);
  });

  it('deletes moot guards by itself about a second after they were left', async () => {
    const store = await open();
    await board(store, 'b2');
    for (let v = 1; v < 4; v++)
      expect(await store.boards.commit('b2', v, { lastSeq: v }, { put: [item(v)], removed: [] })).toBe(true);
    await until(async () => (await held()).length === 0, 10_000);
    expect((await store.boards.load('b2'))!.record.version).toBe(4);
  });
});
