import { newBoardRecord } from '../../store/ports/store.js';
// A data directory the previous version wrote (board headers, entries and events as msgpack maps,
// LZ4-compressed on the dictionary from 64 bytes) opens and reads the same in the store's own
// record format, takes commits on top, and a value no version wrote fails as corrupt.
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { builtDictionary, directoryDictionary } from '../../store/embedded/dictionary.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { CorruptRecordError, type ValueEncoder } from '../../store/embedded/record-codec.js';
import { Writer } from '../../store/embedded/writer.js';
import type { BoardRecord, EventRecord } from '../../store/ports/store.js';
import { firstBytes } from '../support/lmdb-bytes.js';
import { tempDir, type TempDir } from '../support/temp.js';

const BOARD = '0184886d-fb28-4765-aa33-82f9ca697952';
const AGENT = 'agent:9702454c-9eeb-4f9e-8d21-608a76beb51d';
const AT = 1_795_914_632_936;

const item = (n: number, state: string) => ({
  title: `item ${n}`,
  description: n === 2 ? 'Keep behaviour identical; add tests for the edge cases found in review. ✓' : '',
  type: 'task',
  priority: n,
  parentId: null,
  dependsOn: n > 1 ? [`W-${n - 1}`] : [],
  verify: 'none',
  maxAttempts: 3,
  criteria: [],
  doctrine: [],
  spec: [],
  labels: ['backend'],
  workId: `W-${n}`,
  rank: null,
  state,
  life: {
    verify: 'none',
    attempts: 0,
    maxAttempts: 3,
    lease: null,
    submission: state === 'done' ? { head: 'abcdef1', by: AGENT, at: AT } : null,
    verifications: [],
    workHolders: state === 'done' ? [AGENT] : [],
    finding: null,
    overridden: null,
    blockedReason: null,
  },
  progress: null,
  endedLeases: [],
  createdAt: AT - 81,
  updatedAt: AT,
  version: state === 'done' ? 3 : 1,
  readyAt: AT - 81,
});

const event = (seq: number, type: string, data: Record<string, unknown>): EventRecord => ({
  _id: `${BOARD}:${seq}`,
  boardId: BOARD,
  seq,
  type,
  actor: AGENT,
  workId: 'W-1',
  at: AT,
  data,
  version: 1,
});
const patch = {
  workId: 'W-1',
  version: 3,
  state: 'done',
  lease: null,
  submission: { head: 'abcdef1', by: AGENT, at: '2026-11-29T01:10:32.936Z' },
  updatedAt: '2026-11-29T01:10:32.936Z',
};
const events = [
  event(9, 'item.submitted', { head: 'abcdef1', by: AGENT, item: patch }),
  event(10, 'item.state', { from: 'claimed', to: 'done', item: patch }),
];
const counts = {
  pending: 0,
  ready: 1,
  claimed: 0,
  awaiting_verify: 0,
  verifying: 0,
  done: 1,
  blocked: 0,
  cancelled: 0,
};
const header: BoardRecord = {
  _id: BOARD,
  version: 4,
  nextWorkSeq: 4,
  nextFencingToken: 2,
  lastSeq: 10,
  nextDeadline: null,
  commitId: 'c6c7beff-e992-43b6-974a-1db1f09a382c',
  outbox: [{ ...events[1]!, version: undefined } as never],
  counts,
  entries: 2,
  stats: { days: { '2026-11-29': { done: 1, grants: 1, counts } }, active: { [AGENT]: AT } },
};
delete (header.outbox![0] as Partial<EventRecord>).version;

describe('embedded store records', () => {
  const dirs: TempDir[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await d.remove();
  });

  it('opens a directory the previous version wrote and reads it the same, then commits on top', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    // The previous version's layout: plain msgpack maps, LZ4 on the directory's dictionary from 64 bytes.
    const env = open({ path: dir.path, noSubdir: false, maxDbs: 256 });
    const meta = env.openDB({ name: '_meta' });
    const msgpack = (env.openDB({ name: '_meta', useRecords: false } as never) as unknown as { encoder: ValueEncoder })
      .encoder;
    const dictionary = await directoryDictionary(meta, new Writer(env, meta), () =>
      builtDictionary((v) => msgpack.encode(v)),
    );
    const old = { useRecords: false, compression: { threshold: 64, dictionary } } as never;
    const entries = env.openDB({ name: 'boards.entries', ...(old as object) });
    await env.openDB({ name: 'boards', useVersions: true, ...(old as object) }).put(BOARD, header, header.version);
    await entries.put([BOARD, 'W-1'], { v: 4, item: item(1, 'done') });
    await entries.put([BOARD, 'W-2'], { v: 1, item: item(2, 'ready') });
    await entries.put([BOARD, 'W-3'], { v: 2, item: null });
    const log = env.openDB({ name: 'events', useVersions: true, ...(old as object) });
    for (const e of events) await log.put(e._id, e, 1);
    await env.close();
    // Compressed (254) but for the removed entry, too small.
    expect(firstBytes(dir.path, 'boards', true)).toEqual([254]);
    expect(firstBytes(dir.path, 'boards.entries', false)).toEqual([254, 254, 0xde]);
    expect(firstBytes(dir.path, 'events', true)).toEqual([254, 254]);

    const store = await openEmbeddedStore(dir.path);
    expect(await store.boards.load(BOARD)).toStrictEqual({
      record: header,
      items: [item(1, 'done'), item(2, 'ready')],
    });
    expect(await store.boards.changesSince(BOARD, 1)).toStrictEqual({
      record: header,
      items: [item(1, 'done')],
      removed: ['W-3'],
    });
    expect(await store.events.find({ boardId: BOARD }, { sort: [['seq', 1]] })).toStrictEqual(events);
    const next = { ...item(2, 'done'), version: 3 };
    const more = [event(11, 'item.state', { from: 'ready', to: 'done', item: patch })];
    expect(
      await store.boards.commit(BOARD, 4, { lastSeq: 11, commitId: 'c2' }, { put: [next], removed: [] }, more),
    ).toBe(true);
    await store.close();

    // The new values in the store's own format (0xc1), the old ones as they were.
    expect(firstBytes(dir.path, 'boards', true)).toEqual([0xc1]);
    expect(firstBytes(dir.path, 'boards.entries', false)).toEqual([254, 0xc1, 0xde]);
    expect(firstBytes(dir.path, 'events', true)).toEqual([254, 0xc1, 254]); // keys order as strings: ":10" < ":11" < ":9"
    const again = await openEmbeddedStore(dir.path);
    expect(await again.boards.load(BOARD)).toStrictEqual({
      record: { ...header, version: 5, lastSeq: 11, commitId: 'c2' },
      items: [item(1, 'done'), next],
    });
    expect(await again.events.find({ boardId: BOARD }, { sort: [['seq', 1]] })).toStrictEqual([...events, ...more]);
    await again.close();
  });

  it('fails a read of a value no version wrote as corrupt, and reads the rest', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const store = await openEmbeddedStore(dir.path);
    await store.boards.insert(newBoardRecord(BOARD));
    expect(await store.boards.commit(BOARD, 1, { lastSeq: 0 }, { put: [item(1, 'ready')], removed: [] })).toBe(true);
    await store.close();
    // The entry cut short, as a torn or foreign write would leave it.
    const env = open({ path: dir.path, noSubdir: false, maxDbs: 256 });
    const raw = env.openDB({ name: 'boards.entries', encoding: 'binary' });
    const bytes = raw.getBinary([BOARD, 'W-1'])!;
    await raw.put([BOARD, 'W-1'], bytes.subarray(0, bytes.length - 5));
    await env.close();

    const again = await openEmbeddedStore(dir.path);
    await expect(again.boards.load(BOARD)).rejects.toThrow(CorruptRecordError);
    await expect(again.boards.load(BOARD)).rejects.toThrow(/a stored value is corrupt: .* at byte \d+ of \d+/);
    expect(await again.boards.get(BOARD)).toMatchObject({ _id: BOARD, version: 2 });
    await again.close();
  });
});
