// What an embedded store's data directory holds, per LMDB database: entries, pages and bytes (for
// bench/tenants.ts and by hand: `npx tsx store/embedded/stats.ts <DATA_DIR>`). Opens it read-only;
// LMDB lets it run beside the process that serves the directory.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';

export interface DbStats {
  name: string;
  entries: number;
  depth: number;
  branchPages: number;
  leafPages: number;
  overflowPages: number;
  keyBytes: number;
  valueBytes: number;
}

export interface StoreStats {
  fileBytes: number;
  pageSize: number;
  /** Pages in use up to the file's last written page (lastPageNumber + 1). */
  lastPage: number;
  /** Pages no database holds: free for reuse (copy-on-write leaves the old ones there), the freelist's own, the metas. */
  unheldPages: number;
  freelistPages: number;
  dbs: DbStats[];
}

export function storeStats(dataDir: string): StoreStats {
  const env = open({ path: dataDir, noSubdir: false, readOnly: true, maxDbs: 256 });
  try {
    const names: string[] = [];
    for (const key of env.getKeys({})) if (typeof key === 'string') names.push(key);
    const dbs: DbStats[] = [];
    for (const name of names) {
      const db = env.openDB({ name, keyEncoding: 'binary', encoding: 'binary' });
      const s = db.getStats() as Record<string, number>;
      let keyBytes = 0;
      let valueBytes = 0;
      for (const { key, value } of db.getRange({})) {
        keyBytes += (key as Buffer).length;
        valueBytes += (value as Buffer).length;
      }
      dbs.push({
        name,
        entries: s.entryCount!,
        depth: s.treeDepth!,
        branchPages: s.treeBranchPageCount!,
        leafPages: s.treeLeafPageCount!,
        overflowPages: s.overflowPages!,
        keyBytes,
        valueBytes,
      });
    }
    const all = env.getStats() as Record<string, unknown>;
    const free = all.free as Record<string, number>;
    const root = all.root as Record<string, number>;
    const held =
      dbs.reduce((n, d) => n + d.leafPages + d.branchPages + d.overflowPages, 0) +
      root.treeLeafPageCount! +
      root.treeBranchPageCount!;
    const lastPage = (all.lastPageNumber as number) + 1;
    return {
      fileBytes: statSync(join(dataDir, 'data.mdb')).size,
      pageSize: all.pageSize as number,
      lastPage,
      unheldPages: lastPage - held,
      freelistPages: free.treeLeafPageCount! + free.treeBranchPageCount! + free.overflowPages!,
      dbs: dbs.sort((a, b) => b.leafPages + b.overflowPages - (a.leafPages + a.overflowPages)),
    };
  } finally {
    void env.close();
  }
}

/** What `after` holds beyond `before` (databases by name). */
export function statsGrowth(before: StoreStats, after: StoreStats): StoreStats {
  const was = new Map(before.dbs.map((d) => [d.name, d]));
  const minus = (d: DbStats): DbStats => {
    const b = was.get(d.name);
    if (!b) return d;
    return {
      name: d.name,
      entries: d.entries - b.entries,
      depth: d.depth,
      branchPages: d.branchPages - b.branchPages,
      leafPages: d.leafPages - b.leafPages,
      overflowPages: d.overflowPages - b.overflowPages,
      keyBytes: d.keyBytes - b.keyBytes,
      valueBytes: d.valueBytes - b.valueBytes,
    };
  };
  return {
    fileBytes: after.fileBytes - before.fileBytes,
    pageSize: after.pageSize,
    lastPage: after.lastPage - before.lastPage,
    unheldPages: after.unheldPages - before.unheldPages,
    freelistPages: after.freelistPages - before.freelistPages,
    dbs: after.dbs.map(minus),
  };
}

/** A table of `stats`, per board when `boards` is given. */
export function formatStats(stats: StoreStats, boards = 1): string {
  const per = (n: number) => (boards === 1 ? String(n) : (n / boards).toFixed(2));
  const lines = [
    `data.mdb ${(stats.fileBytes / 1024).toFixed(0)} KB, page ${stats.pageSize} B, last page ${stats.lastPage}, ` +
      `${stats.unheldPages} pages no database holds (free, freelist ${stats.freelistPages}, metas)` +
      (boards === 1
        ? ''
        : `; per board: ${(stats.fileBytes / boards / 1024).toFixed(1)} KB file, ${per(stats.lastPage)} pages`),
    `${'database'.padEnd(32)} ${'entries'.padStart(9)} depth ${'leaf'.padStart(7)} ${'branch'.padStart(6)} ${'ovfl'.padStart(6)} ${'key B'.padStart(8)} ${'value B'.padStart(9)}`,
  ];
  for (const d of stats.dbs.filter((d) => d.entries || d.leafPages || d.overflowPages))
    lines.push(
      `${d.name.padEnd(32)} ${per(d.entries).padStart(9)} ${String(d.depth).padStart(5)} ${per(d.leafPages).padStart(7)} ` +
        `${per(d.branchPages).padStart(6)} ${per(d.overflowPages).padStart(6)} ${per(d.keyBytes).padStart(8)} ${per(d.valueBytes).padStart(9)}`,
    );
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: stats.ts <DATA_DIR> [boards]');
  console.log(formatStats(storeStats(dir), Number(process.argv[3] ?? 1)));
}
