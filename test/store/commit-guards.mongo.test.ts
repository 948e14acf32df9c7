// On a wire server without atomic conditional updates (FerretDB 1.x), each board commit holds a
// guard named by its version (store/mongo/mongo-collection.ts). A commit that landed leaves its
// guard moot (the version is past for good), and moot guards are deleted together a moment later:
// one delete a second rather than one a commit. A guard that is not moot is deleted at once, and a
// moot one still refuses a committer at its version. On MongoDB there are no guards.
import { MongoClient } from 'mongodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openMongoStore } from '../../store/mongo/index.js';
import type { Store, StoredItem } from '../../store/ports/store.js';
import { unique } from '../support/temp.js';
import { until } from '../support/until.js';

const uri = inject('mongoUri');
const DB = 'board_test';

describe.skipIf(!uri)('commit guards on the MongoDB wire server', () => {
  const prefix = `${unique('guards')}_`;
  let client: MongoClient;
  const opened: Store[] = [];
  afterAll(async () => {
    for (const store of opened) await store.close();
    const db = client.db(DB);
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) if (name.startsWith(prefix)) await db.collection(name).drop().catch(() => undefined);
    await client.close();
  });

  it('releases the guards of landed commits together within a second, deletes a losing one at once, and a moot one still refuses its version', async () => {
    client = await MongoClient.connect(uri!);
    const ferret = 'ferretdbVersion' in (await client.db(DB).admin().command({ buildInfo: 1 }));
    const store = await openMongoStore({ uri: uri!, db: DB, prefix });
    opened.push(store);
    const guards = client.db(DB).collection(`${prefix}commit_guards`);
    const held = async () => (await guards.find({}).toArray()).map((g) => String(g._id)).sort();
    const item = (n: number): StoredItem => ({ workId: `W-${n}` }) as StoredItem;
    await store.boards.insert({ _id: 'b1', version: 1, nextWorkSeq: 1, nextFencingToken: 1, lastSeq: 0, nextDeadline: null });

    expect(await store.boards.commit('b1', 1, { lastSeq: 1 }, { put: [item(1)], removed: [] })).toBe(true);
    expect(await store.boards.commit('b1', 2, { lastSeq: 2 }, { put: [item(2)], removed: [] })).toBe(true);
    // Landed: the versions' guards wait to be released together (none at all on MongoDB).
    expect(await held()).toEqual(ferret ? ['boards/b1/1', 'boards/b1/2'] : []);

    // A committer that still believes version 2 loses, and writes nothing.
    expect(await store.boards.commit('b1', 2, { lastSeq: 99 }, { put: [item(99)], removed: [] })).toBe(false);
    // One ahead of the board loses too (nothing matched): its guard is not moot, and goes at once.
    expect(await store.boards.commit('b1', 7, { lastSeq: 98 }, { put: [item(98)], removed: [] })).toBe(false);
    expect(await held()).not.toContain('boards/b1/7');
    const board = (await store.boards.load('b1'))!;
    expect(board.record.version).toBe(3);
    expect(board.record.lastSeq).toBe(2);
    expect(board.items.map((i) => i.workId).sort()).toEqual(['W-1', 'W-2']);

    await until(async () => (await held()).length === 0, 5000);

    // Past a hundred moot guards they go at once, without the timer: the collection stays small under a busy board.
    for (let v = 3; v < 153; v++) expect(await store.boards.commit('b1', v, { lastSeq: v }, { put: [item(v)], removed: [] })).toBe(true);
    expect((await held()).length).toBeLessThan(100);
    await (store.boards as Store['boards'] & { settled(): Promise<void> }).settled();
    expect(await held()).toEqual([]);
    expect((await store.boards.load('b1'))!.record.version).toBe(153);
  });
});
