// The embedded store: every collection in memory, made durable by one journal under DATA_DIR.
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { COLLECTION_NAMES, SCHEMA, StoreUnavailableError, type CollectionName, type Collections, type Doc, type Store } from '../ports/store.js';
import { EmbeddedCollection } from './embedded-collection.js';
import { Journal, type JournalOp, type Snapshot } from './journal.js';

export async function openEmbeddedStore(dataDir: string): Promise<Store> {
  await mkdir(dataDir, { recursive: true });
  const lockPath = join(dataDir, 'LOCK');
  await takeLock(lockPath);

  let journal: Journal | null = null;
  const sink = {
    append: (ops: readonly JournalOp[]) => journal!.append(ops),
    settled: () => journal!.settled(),
  };
  const collections = Object.fromEntries(COLLECTION_NAMES.map((name) => [name, new EmbeddedCollection<Doc>(name, SCHEMA[name], sink)])) as unknown as Record<CollectionName, EmbeddedCollection<Doc>>;

  const snapshot = (): Snapshot => ({
    collections: Object.fromEntries(COLLECTION_NAMES.map((name) => [name, [...collections[name].docs.values()]])),
  });
  const load = (s: Snapshot) => {
    for (const name of COLLECTION_NAMES) for (const doc of (s.collections[name] ?? []) as Doc[]) collections[name].replay(doc._id, doc);
  };
  const replay = (ops: readonly JournalOp[]) => {
    for (const [name, id, doc, patch] of ops) collections[name as CollectionName]?.replay(id, doc as Doc | null, patch);
  };
  journal = await Journal.open(dataDir, replay, snapshot, load);

  let closed = false;
  return {
    ...(collections as unknown as Collections),
    kind: 'embedded',
    async ping() {
      if (closed || !journal!.healthy) throw new StoreUnavailableError(new Error(closed ? 'store closed' : 'journal write failed'));
    },
    async close() {
      if (closed) return;
      closed = true;
      await journal!.close();
      await rm(lockPath, { force: true });
    },
  };
}

/** One process per data directory: a second would interleave journal writes. */
async function takeLock(lockPath: string): Promise<void> {
  try {
    const holder = Number((await readFile(lockPath, 'utf8')).trim());
    if (holder && holder !== process.pid && isAlive(holder)) {
      throw new Error(`DATA_DIR is in use by process ${holder} (${lockPath})`);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const fh = await open(lockPath, 'w');
  await fh.writeFile(String(process.pid));
  await fh.close();
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
