// Usage rows on the embedded store: a row whose _id spells its day, scope and key is stored without
// them and read whole through every read (get, find by the index, select, count, deleteMany); a
// row stored whole by an earlier version, and one whose _id spells something else, read as stored.
import { open } from 'lmdb';
import { unpack } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import { usageId } from '../../src/admin/usage.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { usageFieldsOf } from '../../store/embedded/lmdb-usage.js';
import type { UsageRecord } from '../../store/ports/store.js';
import { tempDir, type TempDir } from '../support/temp.js';

/** Each stored value of the usage database, raw (after its 8-byte version), by key (the store closed). */
async function storedValues(path: string): Promise<Map<string, Buffer>> {
  const env = open({ path, noSubdir: false, maxDbs: 256, readOnly: true });
  const db = env.openDB({ name: 'usage', encoding: 'binary' });
  const values = new Map<string, Buffer>();
  for (const { key, value } of db.getRange({})) values.set(key as string, Buffer.from((value as Buffer).subarray(8)));
  await env.close();
  return values;
}

describe('embedded usage rows', () => {
  const dirs: TempDir[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await d.remove();
  });

  it('reads an _id back as the day, scope and key it spells, a bucket day and a key with colons included', () => {
    expect(usageFieldsOf(usageId('2026-11-29', 'principal', 'agent:a-b'))).toEqual({
      day: '2026-11-29',
      scope: 'principal',
      key: 'agent:a-b',
    });
    expect(usageFieldsOf(usageId('2026-11-29T10:20', 'address', '::1'))).toEqual({
      day: '2026-11-29T10:20',
      scope: 'address',
      key: '::1',
    });
    expect(usageFieldsOf('u-1')).toBeNull();
  });

  it('stores a row without what its _id spells, and reads it whole through every read', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const store = await openEmbeddedStore(dir.path);
    const day = '2026-11-29';
    const principal = usageId(day, 'principal', 'agent:0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9');
    const bucket = usageId(`${day}T10:20`, 'address', '2001:db8::1');
    const other = 'u-1'; // an _id that spells no fields: stored whole
    expect(await store.usage.add(principal, usageFieldsOf(principal)!, { requests: 3 })).toBe(true);
    expect(await store.usage.add(principal, usageFieldsOf(principal)!, { requests: 1, commits: 2 })).toBe(false);
    expect(await store.usage.add(bucket, usageFieldsOf(bucket)!, { r429: 1 })).toBe(true);
    expect(await store.usage.add(other, { day, scope: 'board', key: 'b-1' }, { requests: 1 })).toBe(true);
    const row: UsageRecord = {
      _id: principal,
      version: 2,
      day,
      scope: 'principal',
      key: 'agent:0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9',
      counts: { requests: 4, commits: 2 },
    };
    expect(await store.usage.get(principal)).toEqual(row);
    expect(Object.keys((await store.usage.get(principal))!)).toEqual([
      '_id',
      'version',
      'day',
      'scope',
      'key',
      'counts',
    ]);
    expect(await store.usage.find({ day, scope: 'principal' })).toEqual([row]);
    expect(await store.usage.find({ day: { $gte: day, $lt: '2026-11-30' } }, { sort: [['_id', 1]] })).toEqual([
      row,
      { _id: bucket, version: 1, day: `${day}T10:20`, scope: 'address', key: '2001:db8::1', counts: { r429: 1 } },
      { _id: other, version: 1, day, scope: 'board', key: 'b-1', counts: { requests: 1 } },
    ]);
    expect(await store.usage.select({ scope: 'principal', key: row.key }, ['counts'])).toEqual([
      { _id: principal, counts: row.counts },
    ]);
    expect(await store.usage.get(other)).toEqual({
      _id: other,
      version: 1,
      day,
      scope: 'board',
      key: 'b-1',
      counts: { requests: 1 },
    });
    expect(await store.usage.count({ day })).toBe(2);
    expect(await store.usage.versionOf(principal)).toBe(2);
    await store.close();
    // A row whose _id spells its fields holds its version and counts alone (plain msgpack: too small to compress).
    const stored = await storedValues(dir.path);
    expect(unpack(stored.get(principal)!)).toEqual({ version: 2, counts: { requests: 4, commits: 2 } });
    expect(unpack(stored.get(bucket)!)).toEqual({ version: 1, counts: { r429: 1 } });
    const reopened = await openEmbeddedStore(dir.path);
    expect(await reopened.usage.deleteMany({ day: { $lt: `${day}T` } })).toBe(2);
    expect(await reopened.usage.get(principal)).toBeNull();
    expect(await reopened.usage.find({ day })).toEqual([]);
    expect(await reopened.usage.find({ scope: 'address' })).toHaveLength(1);
    await reopened.close();
  });

  it('reads a row an earlier version stored whole, and adds to it', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const day = '2026-11-28';
    const id = usageId(day, 'account', 'acc-1');
    const old: UsageRecord = { _id: id, version: 1, day, scope: 'account', key: 'acc-1', counts: { requests: 5 } };
    {
      const store = await openEmbeddedStore(dir.path);
      await store.close();
      // As written before rows were stored lean: the whole document, uncompressed msgpack.
      const env = open({ path: dir.path, noSubdir: false, maxDbs: 256 });
      await env.openDB({ name: 'usage', useVersions: true, useRecords: false } as never).put(id, old, 1);
      await env.openDB({ name: 'usage.day_scope' }).put([day, 'account', id], null);
      await env.close();
    }
    const store = await openEmbeddedStore(dir.path);
    expect(await store.usage.get(id)).toEqual(old);
    expect(await store.usage.find({ day, scope: 'account' })).toEqual([old]);
    expect(await store.usage.add(id, { day, scope: 'account', key: 'acc-1' }, { requests: 1 })).toBe(false);
    expect(await store.usage.get(id)).toEqual({ ...old, version: 2, counts: { requests: 6 } });
    expect(await store.usage.find({ day, scope: 'account' })).toEqual([
      { ...old, version: 2, counts: { requests: 6 } },
    ]);
    await store.close();
  });
});
