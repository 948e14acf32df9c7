// A board commit queued on LMDB's write thread that fails while it is being made (a value the
// encoder refuses, a key over LMDB's limit) lands whole or not at all: the header, the entries,
// the event log and the commits mark stay as the commit before left them, and the store goes on.
import { afterEach, describe, expect, it } from 'vitest';
import { open } from 'lmdb';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { newBoardRecord, type EventRecord, type Store, type StoredItem } from '../../store/ports/store.js';
import { tempDir, unique, type TempDir } from '../support/temp.js';

const items = (...list: (StoredItem & Record<string, unknown>)[]): StoredItem[] => list;

/** A value whose encoding throws: reading its `title` throws, as a getter of the caller's might. */
const poisoned = <T extends object>(value: T): T =>
  Object.defineProperty(value, 'title', {
    enumerable: true,
    get() {
      throw new Error('no encoding for this value');
    },
  });

const event = (boardId: string, seq: number, data: Record<string, unknown> = {}): EventRecord => ({
  _id: `${boardId}:${seq}`,
  version: 1,
  boardId,
  seq,
  type: 'item.updated',
  actor: 'agent:a',
  workId: `W-${seq}`,
  data,
  at: 1_000 + seq,
});

/** What a reader sees of a board: its header, its items, what changed after version 1, its log. */
async function seen(store: Store, id: string) {
  const loaded = await store.boards.load(id);
  return {
    record: loaded?.record,
    items: loaded?.items,
    changes: await store.boards.changesSince(id, 1),
    events: await store.events.find({ boardId: id }, { sort: [['seq', 1]] }),
  };
}

/** Resolves once every write queued before has landed (lmdb-js applies them in order). */
async function settled(store: Store): Promise<void> {
  const id = unique('other');
  await store.boards.insert(newBoardRecord(id));
}

/** The [boardId, commitId] marks the store holds, read from LMDB itself (the store closed). */
function marks(path: string): unknown[] {
  const env = open({ path, noSubdir: false, maxDbs: 256 });
  try {
    return [...env.openDB({ name: 'boards.commits' }).getKeys()];
  } finally {
    void env.close();
  }
}

/** The ways a commit can fail while it is made: each faulty write comes after writes that are fine. */
const faults: { name: string; id: string; fault: (id: string) => { put: StoredItem[]; log: EventRecord[] } }[] = [
  {
    name: 'an entry the encoder refuses, after one it took',
    id: 'board',
    fault: (id) => ({
      put: items({ workId: 'W-1', title: 'half' }, poisoned({ workId: 'W-4' }), { workId: 'W-5' }),
      log: [event(id, 2), event(id, 3)],
    }),
  },
  {
    name: 'an event the encoder refuses, after the header, the entries and the mark',
    id: 'board',
    fault: (id) => ({
      put: items({ workId: 'W-1', title: 'half' }, { workId: 'W-3' }),
      log: [event(id, 2), event(id, 3, poisoned({}))],
    }),
  },
  {
    // Some 400 three-byte characters in each half: the entry's key is some 2,400 bytes, over LMDB's 1,978.
    name: 'an entry whose key is over LMDB’s limit, after one that is not',
    id: '€'.repeat(390),
    fault: (id) => ({
      put: items({ workId: 'W-1', title: 'half' }, { workId: '€'.repeat(400) }),
      log: [event(id, 2), event(id, 3)],
    }),
  },
];

describe('embedded store: a board commit that fails while it is queued', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function opened(): Promise<{ dir: TempDir; store: Store }> {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const store = await openEmbeddedStore(dir.path);
    cleanups.push(() => store.close());
    return { dir, store };
  }

  /** A board at version 2 (commit `c1`): items W-1 and W-2, event 1. */
  async function board(store: Store, id: string): Promise<void> {
    const header = { ...newBoardRecord(id), nextWorkSeq: 3 };
    await store.boards.insert(header);
    const first = await store.boards.commit(
      id,
      1,
      { lastSeq: 1, commitId: 'c1' },
      { put: items({ workId: 'W-1', title: 'one' }, { workId: 'W-2' }), removed: [] },
      [event(id, 1)],
    );
    expect(first).toBe(true);
  }

  it.each(faults)('writes nothing of it: $name', async ({ id, fault }) => {
    const { dir, store } = await opened();
    await board(store, id);
    const before = await seen(store, id);
    const { put, log } = fault(id);
    await expect(
      store.boards.commit(id, 2, { lastSeq: 3, commitId: 'c2' }, { put, removed: ['W-2'] }, log, { after: 'c1' }),
    ).rejects.toThrow();
    await settled(store);
    expect(await seen(store, id)).toEqual(before);

    // The store goes on: the next commit lands on the header the failed one left, and reads back whole.
    expect(
      await store.boards.commit(
        id,
        2,
        { lastSeq: 3, commitId: 'c3' },
        { put: items({ workId: 'W-1', title: 'changed' }), removed: ['W-2'] },
        [event(id, 2), event(id, 3)],
        { after: 'c1' },
      ),
    ).toBe(true);
    const after = await seen(store, id);
    expect(after.record).toMatchObject({ version: 3, lastSeq: 3, commitId: 'c3' });
    expect(after.items).toEqual([{ workId: 'W-1', title: 'changed' }]);
    expect(after.events.map((e) => e.seq)).toEqual([1, 2, 3]);

    await store.close();
    expect(marks(dir.path)).toEqual([[id, 'c3']]);
    const again = await openEmbeddedStore(dir.path);
    cleanups.push(() => again.close());
    expect(await seen(again, id)).toEqual(after);
  });

  it('lands a commit whose keys are long but within LMDB’s limit, and one an earlier version sent through a transaction', async () => {
    const { dir, store } = await opened();
    // 900 + 900 one-byte characters: some 1,800 bytes, under LMDB's 1,978 (too many to let through unwritten).
    const id = 'b'.repeat(900);
    await board(store, id);
    const put = items({ workId: 'W-1', title: 'changed' }, { workId: 'w'.repeat(900) });
    expect(
      await store.boards.commit(id, 2, { lastSeq: 3, commitId: 'c2' }, { put, removed: ['W-2'] }, [
        event(id, 2),
        event(id, 3),
      ]),
    ).toBe(true);
    const landed = await seen(store, id);
    expect(landed.record).toMatchObject({ version: 3, lastSeq: 3, commitId: 'c2' });
    expect(landed.items).toEqual(put);
    expect(landed.events.map((e) => e.seq)).toEqual([1, 2, 3]);
    await store.close();
    expect(marks(dir.path)).toEqual([[id, 'c2']]);
  });

  it('writes nothing of a commit that fails while the one it stands on is still on its way, and lands that one', async () => {
    const { dir, store } = await opened();
    const id = unique('board');
    const header = { ...newBoardRecord(id), nextWorkSeq: 3 };
    await store.boards.insert(header);
    const put = items({ workId: 'W-1', title: 'one' }, { workId: 'W-2' });
    const first = store.boards.commit(id, 1, { lastSeq: 1, commitId: 'c1' }, { put, removed: [] }, [event(id, 1)]);
    const second = store.boards.commit(
      id,
      2,
      { lastSeq: 3, commitId: 'c2' },
      { put: items({ workId: 'W-3' }, poisoned({ workId: 'W-4' })), removed: ['W-2'] },
      [event(id, 2), event(id, 3)],
      { after: 'c1' },
    );
    await expect(second).rejects.toThrow();
    expect(await first).toBe(true);
    await settled(store);
    const landed = await seen(store, id);
    expect(landed.record).toMatchObject({ version: 2, lastSeq: 1, commitId: 'c1' });
    expect(landed.items).toEqual(put);
    expect(landed.events.map((e) => e.seq)).toEqual([1]);
    await store.close();
    expect(marks(dir.path)).toEqual([[id, 'c1']]);
  });
});
