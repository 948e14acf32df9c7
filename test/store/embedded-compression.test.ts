// Documents are stored LZ4-compressed against the directory's dictionary (board headers, entries
// and events in the store's own format instead: record-codec.ts): a directory written uncompressed
// by an earlier version still reads, values written now are compressed, and a directory keeps the
// dictionary it was first compressed with.
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { directoryDictionary } from '../../store/embedded/dictionary.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { Writer } from '../../store/embedded/writer.js';
import type { EventRecord } from '../../store/ports/store.js';
import { firstBytes } from '../support/lmdb-bytes.js';
import { tempDir, type TempDir } from '../support/temp.js';

const event = (seq: number): EventRecord => ({
  _id: `b1:${seq}`,
  version: 1,
  boardId: 'b1',
  seq,
  type: 'item.state',
  actor: 'agent:a',
  workId: 'W-1',
  at: seq,
  data: { from: 'ready', to: 'claimed', item: { workId: 'W-1', state: 'claimed', lease: null } },
});

describe('embedded store compression', () => {
  const dirs: TempDir[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await d.remove();
  });

  it('reads what an earlier version stored uncompressed, and compresses what it writes', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    // The earlier layout: plain msgpack maps, no dictionary in _meta.
    const env = open({ path: dir.path, noSubdir: false, maxDbs: 256 });
    const events = env.openDB({ name: 'events', useVersions: true, useRecords: false } as never);
    await events.put('b1:1', event(1), 1);
    const header = { _id: 'b1', version: 1, nextWorkSeq: 2, nextFencingToken: 1, lastSeq: 1, nextDeadline: null };
    await env.openDB({ name: 'boards', useVersions: true, useRecords: false } as never).put('b1', header, 1);
    const item = { workId: 'W-1', title: 'item 0', description: '', state: 'ready', labels: [] };
    await env.openDB({ name: 'boards.entries', useRecords: false } as never).put(['b1', 'W-1'], { v: 1, item });
    await env.close();

    const store = await openEmbeddedStore(dir.path);
    expect(await store.events.get('b1:1')).toEqual(event(1));
    expect(await store.boards.load('b1')).toEqual({ record: header, items: [item] });
    const claimed = { ...item, state: 'claimed', title: 'item 0, now claimed by an agent of this board' };
    expect(await store.boards.commit('b1', 1, { lastSeq: 2 }, { put: [claimed], removed: [] }, [event(2)])).toBe(true);
    const link = {
      _id: 'a'.repeat(64),
      version: 1,
      accountId: 'acc-1',
      purpose: 'verify-email' as const,
      email: 'someone@example.com',
      createdAt: 1,
      expiresAt: 2,
    };
    await store.linkTokens.insert(link);
    await store.close();

    // 254: LZ4 with a length of three bytes; 0xc1 the store's own record format. The value of the
    // earlier version stays a msgpack map.
    expect(firstBytes(dir.path, 'linkTokens', true)).toEqual([254]);
    expect(firstBytes(dir.path, 'events', true)).toEqual([0xde, 0xc1]);
    expect(firstBytes(dir.path, 'boards.entries', false)).toEqual([0xc1]);
    const again = await openEmbeddedStore(dir.path);
    expect(await again.events.find({ boardId: 'b1' })).toEqual([event(1), event(2)]);
    expect(await again.boards.load('b1')).toEqual({ record: { ...header, version: 2, lastSeq: 2 }, items: [claimed] });
    expect(await again.linkTokens.get(link._id)).toEqual(link);
    await again.close();
  });

  it('keeps the dictionary a directory was first compressed with', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const env = open({ path: dir.path, noSubdir: false, maxDbs: 256 });
    const meta = env.openDB({ name: '_meta' });
    const writer = new Writer(env, meta);
    const first = await directoryDictionary(meta, writer, () => Buffer.from('first dictionary'));
    const later = await directoryDictionary(meta, writer, () => Buffer.from('a later built one'));
    expect(later).toEqual(first);
    expect(first.toString()).toBe('first dictionary');
    await env.close();
  });
});
