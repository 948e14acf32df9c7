// What the embedded store keeps resident (issue 46): the pages of data.mdb read through one map,
// never more than the file holds. lmdb-js used to grow its map by doubling and keep each earlier
// map mapped, each with the pages read through it. Linux only (it reads /proc/self/smaps).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import type { EventRecord } from '../../store/ports/store.js';
import { tempDir, type TempDir } from '../support/temp.js';

/** The mappings of `file` in this process: how many, and their resident KB together. */
function mapped(file: string): { maps: number; residentKb: number } {
  let maps = 0;
  let residentKb = 0;
  let inFile = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      inFile = line.endsWith(` ${file}`);
      if (inFile) maps++;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && inFile) residentKb += Number(rss[1]);
  }
  return { maps, residentKb };
}

describe.skipIf(!existsSync('/proc/self/smaps'))('embedded store memory', () => {
  const dirs: TempDir[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await d.remove();
  });

  it('reads a growing data.mdb through one map, resident no more than the file', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const store = await openEmbeddedStore(dir.path);
    try {
      const event = (board: number, seq: number): EventRecord => ({
        _id: `board-${board}:${seq}`,
        version: 1,
        boardId: `board-${board}`,
        seq,
        type: 'item.created',
        actor: 'agent:a',
        workId: `W-${seq}`,
        at: seq,
        data: { title: `item ${seq}`.padEnd(200, '.') },
      });
      // About 6 MB, written a board at a time as boards grow: the file passes many map sizes.
      for (let board = 0; board < 200; board++) {
        await store.events.insertMissing(Array.from({ length: 60 }, (_, i) => event(board, i + 1)));
        await store.events.find({ boardId: `board-${board}` });
      }
      const file = join(dir.path, 'data.mdb');
      const { maps, residentKb } = mapped(file);
      expect(maps).toBe(1);
      expect(residentKb).toBeLessThanOrEqual(statSync(file).size / 1024);
    } finally {
      await store.close();
    }
  });
});
