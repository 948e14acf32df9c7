import { afterEach, describe, expect, it } from 'vitest';
import { readdir, stat } from 'node:fs/promises';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import type { Store } from '../../store/ports/store.js';
import { tempDir, unique } from '../support/temp.js';
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

describe('embedded journal', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('refuses a second process-level open of the same directory while the first holds it', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const store = await openEmbeddedStore(dir.path);
    cleanups.unshift(() => store.close());
    // The lock names this very process, which is allowed to reopen (tests reopen in-process);
    // a foreign live pid is refused.
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${dir.path}/LOCK`, String(process.ppid));
    await expect(openEmbeddedStore(dir.path)).rejects.toThrow(/in use by process/);
  });

  it('compacts into a snapshot and keeps everything after restart', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    let store = await openEmbeddedStore(dir.path);
    const board = unique('board');
    const payload = 'x'.repeat(20_000);
    // ~10 MB of journal crosses the compaction threshold (8 MiB).
    await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        store.events.insert({ _id: `${board}:${i}`, version: 1, boardId: board, seq: i, type: 't', actor: 'a', workId: null, at: i, data: { payload } }),
      ),
    );
    await store.close(); // waits for the background compaction
    const files = await readdir(dir.path);
    const journals = files.filter((f) => f.startsWith('journal-'));
    expect(journals).toHaveLength(1);
    expect(Number(journals[0]!.slice(8, -4))).toBeGreaterThan(1);
    expect((await stat(`${dir.path}/${journals[0]}`)).size).toBeLessThan(8 * 1024 * 1024);
    store = await openEmbeddedStore(dir.path);
    cleanups.unshift(() => store.close());
    expect(await store.events.count({ boardId: board })).toBe(500);
  });

  it('groups concurrent writes into fewer syncs than writes', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const store = await openEmbeddedStore(dir.path);
    cleanups.unshift(() => store.close());
    const board = unique('board');
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.events.insert({ _id: `${board}:${i}`, version: 1, boardId: board, seq: i, type: 't', actor: 'a', workId: null, at: i, data: {} })));
    const { readFile } = await import('node:fs/promises');
    const journal = (await readdir(dir.path)).find((f) => f.startsWith('journal-'))!;
    const lines = (await readFile(`${dir.path}/${journal}`, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(200);
    expect(await store.events.count({ boardId: board })).toBe(200);
  });
});
