import { newBoardRecord } from '../../store/ports/store.js';
import { afterEach, describe, expect, it } from 'vitest';
import { readdir, writeFile } from 'node:fs/promises';
import { open } from 'lmdb';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import type { Store } from '../../store/ports/store.js';
import { tempDir } from '../support/temp.js';
import { storeContract } from './contract.js';

const dirs = new Map<Store, () => Promise<void>>();
const paths = new Map<Store, string>();

storeContract('embedded', {
  async open() {
    const dir = await tempDir();
    const store = await openEmbeddedStore(dir.path);
    dirs.set(store, dir.remove);
    paths.set(store, dir.path);
    return store;
  },
  async reopen(store) {
    const path = paths.get(store)!;
    const remove = dirs.get(store)!;
    await store.close();
    const next = await openEmbeddedStore(path);
    dirs.set(next, remove);
    paths.set(next, path);
    return next;
  },
  async cleanup(store) {
    await store.close();
    await dirs.get(store)?.();
  },
});

describe('embedded store on LMDB', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('holds its directory alone: a second open is refused, naming the holder, until the first closes', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const store = await openEmbeddedStore(dir.path);
    await expect(openEmbeddedStore(dir.path)).rejects.toThrow(
      `DATA_DIR ${dir.path} is in use by process ${process.pid}`,
    );
    await store.close();
    const again = await openEmbeddedStore(dir.path);
    await again.close();
  });

  it('keeps its files inside DATA_DIR even when the directory name looks like a file name', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const store = await openEmbeddedStore(`${dir.path}/board.data`);
    await store.accounts.insert({
      _id: 'a1',
      version: 1,
      email: 'a@example.com',
      passwordHash: 'h',
      displayName: null,
      defaultProjectId: null,
      emailVerified: false,
      referralCode: 'r1',
      referredBy: null,
      referralMonths: 0,
      createdAt: 1,
    });
    await store.close();
    expect((await readdir(`${dir.path}/board.data`)).sort()).toEqual(['data.mdb', 'lock.mdb', 'serve.lock']);
  });

  it('refuses a directory in the old journal format with one line naming it', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    await writeFile(`${dir.path}/journal-3.log`, '[]\n');
    await expect(openEmbeddedStore(dir.path)).rejects.toThrow(
      /^DATA_DIR .* holds the old journal format \(journal-3\.log\)/,
    );
  });

  it('fails every call closed once closed', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const store = await openEmbeddedStore(dir.path);
    await store.close();
    await expect(store.ping()).rejects.toThrow('store unavailable');
    await expect(store.accounts.get('x')).rejects.toThrow('store unavailable');
  });

  it('writes a commit’s events to the log in the commit’s own transaction: with it when it lands, neither when it loses the race', async () => {
    const dir = await tempDir();
    const store = await openEmbeddedStore(dir.path);
    try {
      expect(store.boards.logsInCommit).toBe(true);
      await store.boards.insert(newBoardRecord('b1'));
      const event = (seq: number) => ({
        _id: `b1:${seq}`,
        version: 1,
        boardId: 'b1',
        seq,
        type: 'item.created',
        actor: 'agent:a',
        workId: `W-${seq}`,
        data: {},
        at: 1_000 + seq,
      });
      expect(
        await store.boards.commit(
          'b1',
          1,
          { lastSeq: 2 },
          { put: [{ workId: 'W-1' }, { workId: 'W-2' }], removed: [] },
          [event(1), event(2)],
        ),
      ).toBe(true);
      expect((await store.events.find({ boardId: 'b1' }, { sort: [['seq', 1]] })).map((e) => e.seq)).toEqual([1, 2]);
      // A commit at a version already taken writes no entry, no header and no event.
      expect(
        await store.boards.commit('b1', 1, { lastSeq: 3 }, { put: [{ workId: 'W-3' }], removed: [] }, [event(3)]),
      ).toBe(false);
      expect(await store.events.count({ boardId: 'b1' })).toBe(2);
      // Events already in the log are skipped, as insertMissing skips them.
      expect(
        await store.boards.commit('b1', 2, { lastSeq: 3 }, { put: [{ workId: 'W-3' }], removed: [] }, [
          event(2),
          event(3),
        ]),
      ).toBe(true);
      expect((await store.events.find({ boardId: 'b1' }, { sort: [['seq', 1]] })).map((e) => e.seq)).toEqual([1, 2, 3]);
      expect((await store.boards.load('b1'))!.items.map((i) => i.workId)).toEqual(['W-1', 'W-2', 'W-3']);
    } finally {
      await store.close();
      await dir.remove();
    }
  });

  it('applies commits started one after another in order, and lands one standing on another commit only on the header that commit wrote', async () => {
    const dir = await tempDir();
    const store = await openEmbeddedStore(dir.path);
    try {
      expect(store.boards.writesInOrder).toBe(true);
      await store.boards.insert(newBoardRecord('b1'));
      const event = (seq: number) => ({
        _id: `b1:${seq}`,
        version: 1,
        boardId: 'b1',
        seq,
        type: 'item.created',
        actor: 'agent:a',
        workId: `W-${seq}`,
        data: {},
        at: 1_000 + seq,
      });
      const commit = (version: number, id: string, seq: number, after?: string) =>
        store.boards.commit(
          'b1',
          version,
          { lastSeq: seq, commitId: id },
          { put: [{ workId: `W-${seq}` }], removed: [] },
          [event(seq)],
          after === undefined ? {} : { after },
        );
      // The second is started before the first lands, standing on it: both land, in order.
      expect(await Promise.all([commit(1, 'one', 1), commit(2, 'two', 2, 'one')])).toEqual([true, true]);
      // Another writer takes version 3; the commit this process meant for it loses, and the one started behind that one
      // finds version 3 but not the commit it stood on: it writes nothing.
      expect(await commit(3, 'foreign', 3, 'two')).toBe(true);
      expect(await Promise.all([commit(3, 'mine', 4, 'two'), commit(4, 'behind-mine', 5, 'mine')])).toEqual([
        false,
        false,
      ]);
      expect((await store.boards.load('b1'))!.items.map((i) => i.workId)).toEqual(['W-1', 'W-2', 'W-3']);
      expect((await store.events.find({ boardId: 'b1' }, { sort: [['seq', 1]] })).map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(await commit(4, 'on-foreign', 4, 'foreign')).toBe(true);
    } finally {
      await store.close();
      await dir.remove();
    }
  });

  it('commits on the header as stored, not on one it wrote before, once the board was deleted and inserted again at that version', async () => {
    const dir = await tempDir();
    const store = await openEmbeddedStore(dir.path);
    try {
      const header = { _id: 'b1', nextWorkSeq: 1, nextFencingToken: 1, lastSeq: 0, nextDeadline: null };
      await store.boards.insert({ ...header, version: 1 });
      expect(await store.boards.commit('b1', 1, { nextWorkSeq: 7 }, { put: [], removed: [] })).toBe(true);
      expect(await store.boards.delete('b1')).toBe(true);
      await store.boards.insert({ ...header, version: 2, nextFencingToken: 9 });
      expect(await store.boards.commit('b1', 2, { lastSeq: 0 }, { put: [], removed: [] })).toBe(true);
      const record = (await store.boards.load('b1'))!.record;
      expect([record.version, record.nextWorkSeq, record.nextFencingToken]).toEqual([3, 1, 9]);
    } finally {
      await store.close();
      await dir.remove();
    }
  });

  it('moves boards an earlier version kept under boards.items to entries of their own at first open, losing nothing', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    // The earlier layout: the header in `boards` (versioned entries), its items under [boardId, workId] in `boards.items`.
    const env = open({ path: dir.path, noSubdir: false, maxDbs: 256 });
    const header = {
      _id: 'old-board',
      version: 4,
      nextWorkSeq: 4,
      nextFencingToken: 2,
      lastSeq: 9,
      nextDeadline: null,
    };
    await env.openDB({ name: 'boards', useVersions: true }).put('old-board', header, 4);
    const items = env.openDB({ name: 'boards.items' });
    for (const n of [1, 2, 3]) await items.put(['old-board', `W-${n}`], { workId: `W-${n}`, title: `item ${n}` });
    await env.close();

    const store = await openEmbeddedStore(dir.path);
    const board = (await store.boards.load('old-board'))!;
    expect(board.record).toEqual(header);
    expect(board.items).toEqual([1, 2, 3].map((n) => ({ workId: `W-${n}`, title: `item ${n}` })));
    expect(
      await store.boards.commit(
        'old-board',
        4,
        { lastSeq: 10 },
        { put: [{ workId: 'W-2', title: 'changed' } as never], removed: ['W-3'] },
      ),
    ).toBe(true);
    expect((await store.boards.changesSince('old-board', 4))!).toMatchObject({
      items: [{ workId: 'W-2', title: 'changed' }],
      removed: ['W-3'],
    });
    await store.close();
    const again = await openEmbeddedStore(dir.path);
    expect((await again.boards.load('old-board'))!.items.map((i) => i.workId)).toEqual(['W-1', 'W-2']);
    await again.close();
  });

  it('empties the index of versions an earlier version kept beside the entries, and reads what changed from the entries alone', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    // The earlier layout: entries [boardId, workId] → { v, item } and a version index [boardId, v, workId].
    const env = open({ path: dir.path, noSubdir: false, maxDbs: 256 });
    await env
      .openDB({ name: 'boards', useVersions: true })
      .put('b', { _id: 'b', version: 3, nextWorkSeq: 3, nextFencingToken: 1, lastSeq: 3, nextDeadline: null }, 3);
    const entries = env.openDB({ name: 'boards.entries' });
    const versions = env.openDB({ name: 'boards.versions' });
    await entries.put(['b', 'W-1'], { v: 2, item: { workId: 'W-1', title: 'one' } });
    await entries.put(['b', 'W-2'], { v: 3, item: null });
    await entries.put(['b', 'W-3'], { v: 3, item: { workId: 'W-3', title: 'three' } });
    for (const [v, w] of [
      [2, 'W-1'],
      [3, 'W-2'],
      [3, 'W-3'],
    ] as const)
      await versions.put(['b', v, w], true);
    await env.close();

    const store = await openEmbeddedStore(dir.path);
    const changed = async (version: number) => {
      const c = (await store.boards.changesSince('b', version))!;
      return { items: c.items.map((i) => i.workId), removed: c.removed };
    };
    expect(await changed(1)).toEqual({ items: ['W-1', 'W-3'], removed: ['W-2'] });
    expect(await changed(2)).toEqual({ items: ['W-3'], removed: ['W-2'] });
    expect(await changed(3)).toEqual({ items: [], removed: [] });
    expect(
      await store.boards.commit(
        'b',
        3,
        { lastSeq: 4 },
        { put: [{ workId: 'W-1', title: 'ONE' } as never], removed: [] },
      ),
    ).toBe(true);
    expect(await changed(3)).toEqual({ items: ['W-1'], removed: [] });
    await store.close();
    const after = open({ path: dir.path, noSubdir: false, maxDbs: 256 });
    expect(after.openDB({ name: 'boards.versions' }).getKeysCount()).toBe(0);
    await after.close();
  });
});
