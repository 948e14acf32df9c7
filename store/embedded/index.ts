// The embedded store: LMDB under DATA_DIR (data.mdb and lock.mdb), one database per collection,
// per index, and for boards' items, all in one environment so a write spans them atomically.
// One process holds the directory at a time (see dir-lock.ts).
import { mkdir, readdir } from 'node:fs/promises';
import { open, type Database, type DatabaseOptions, type Key as LmdbKey } from 'lmdb';
import {
  COLLECTION_NAMES,
  SCHEMA,
  StoreUnavailableError,
  type CollectionName,
  type Collections,
  type EventRecord,
  type Store,
  type StoredItem,
} from '../ports/store.js';
import { builtDictionary, directoryDictionary } from './dictionary.js';
import { lockDir } from './dir-lock.js';
import { LmdbBoards } from './lmdb-boards.js';
import { LmdbCollection, type CollectionDbs, type Key } from './lmdb-collection.js';
import { LmdbUsage } from './lmdb-usage.js';
import { recordCodec, type ValueEncoder } from './record-codec.js';
import { Writer } from './writer.js';

/** What the hand-written journal of earlier versions left in a data directory. */
const OLD_FORMAT = /^(?:journal-\d+\.log|snapshot-\d+\.json)$/;

/**
 * Values as plain msgpack maps. msgpackr's default record extension defines each object's shape
 * inside every value (no shared structures here: a structure saved in a transaction that aborts
 * would stay in the encoder and name nothing on disk), which cost more to write and read than the
 * keys themselves for these small, varied documents. Values written either way read back alike.
 * msgpackr takes the option through lmdb-js, whose types do not list it.
 */
const PLAIN_MAPS = { useRecords: false } as DatabaseOptions;

/**
 * The address space the map reserves up front (not the file's size: without a write map LMDB never
 * extends the file past what it holds, and a read-only shared mapping takes no memory until read).
 * lmdb-js otherwise starts at 128 KB and doubles the map as the file grows, keeping every earlier
 * map mapped until close for readers that may still point into it; each holds the pages read
 * through it, so the process's resident file pages came to about 2.7 times data.mdb (issue 46).
 * One map this size is never replaced below a terabyte of data.
 */
const MAP_SIZE = 2 ** 40;

/** Documents from this size on are stored LZ4-compressed against the directory's dictionary (dictionary.ts). */
const COMPRESS_FROM_BYTES = 64;
/**
 * The same for board headers, entries and events, which the store writes in its own format
 * (record-codec.ts), already smaller than LZ4 made their msgpack: only a large one is worth
 * compressing (lmdb-js loads the dictionary into LZ4 for every value it compresses, some 30 µs
 * here, most of a commit's transaction before this format).
 */
const COMPRESS_RECORDS_FROM_BYTES = 1024;

export async function openEmbeddedStore(dataDir: string): Promise<Store> {
  await mkdir(dataDir, { recursive: true });
  const old = (await readdir(dataDir)).find((f) => OLD_FORMAT.test(f));
  if (old)
    throw new Error(
      `DATA_DIR ${dataDir} holds the old journal format (${old}); this version keeps LMDB files there: move the directory aside and start again`,
    );
  const lock = await lockDir(dataDir);

  const env = open({
    path: dataDir,
    // A directory, even when its name has a dot (lmdb-js would otherwise take it for a file).
    noSubdir: false,
    maxDbs: 256,
    mapSize: MAP_SIZE,
    // A commit's promise resolves only once it is synced, and readers see it no earlier.
    overlappingSync: false,
    // Batches form from whatever is queued while a commit is in flight (group commit), not per
    // event turn; lmdb-js's event-turn batch leaves a rejected promise unhandled on a failed commit.
    eventTurnBatching: false,
  });
  const meta = env.openDB({ name: '_meta' });
  const writer = new Writer(env, meta);
  // A value compressed starts with a byte no msgpack document does, so values stored uncompressed
  // by earlier versions read as they are. One compressor per threshold for all its databases
  // (lmdb-js shares the instance that the first openDB makes of the options).
  const msgpack = (env.openDB({ name: '_meta', ...PLAIN_MAPS }) as unknown as { encoder: ValueEncoder }).encoder;
  const dictionary = await directoryDictionary(meta, writer, () => builtDictionary((v) => msgpack.encode(v)));
  const compressor = (threshold: number) => {
    const compressed = { compression: { threshold, dictionary } } as DatabaseOptions;
    return <V, K extends LmdbKey>(options: DatabaseOptions & { name: string }): Database<V, K> => {
      const db = env.openDB<V, K>({ ...options, ...compressed });
      compressed.compression = (db as unknown as { compression: DatabaseOptions['compression'] }).compression;
      return db;
    };
  };
  const withCompression = compressor(COMPRESS_FROM_BYTES);
  // Values earlier versions wrote there as msgpack, compressed or not, read as they are.
  const asRecords = compressor(COMPRESS_RECORDS_FROM_BYTES);
  const records = { encoder: recordCodec(msgpack) } as DatabaseOptions;
  const dbsOf = (name: CollectionName): CollectionDbs => ({
    docs:
      name === 'boards' || name === 'events'
        ? asRecords({ name, useVersions: true, ...records })
        : withCompression({ name, useVersions: true, ...PLAIN_MAPS }),
    indexes: SCHEMA[name].map((spec) => ({
      spec,
      db: env.openDB({ name: `${name}.${spec.name}` }) as Database<string | null, Key>,
    })),
  });
  const events = new LmdbCollection<EventRecord>('events', dbsOf('events'), writer);
  const boards = new LmdbBoards(
    dbsOf('boards'),
    writer,
    {
      items: asRecords({ name: 'boards.entries', ...records }),
      versions: env.openDB({ name: 'boards.versions' }),
      commits: env.openDB({ name: 'boards.commits' }),
    },
    events,
  );
  // Earlier versions kept a board's items under `boards.items`, without the board version that wrote each,
  // and then an index of versions beside the entries.
  await boards.migrate(env.openDB<StoredItem, Key>({ name: 'boards.items' }));
  await boards.dropVersionIndex();
  const collections = Object.fromEntries(
    COLLECTION_NAMES.map((name) => [
      name,
      name === 'boards'
        ? boards
        : name === 'events'
          ? events
          : name === 'usage'
            ? new LmdbUsage(name, dbsOf(name), writer)
            : new LmdbCollection(name, dbsOf(name), writer),
    ]),
  ) as unknown as Record<CollectionName, LmdbCollection<never>>;

  // Indexes declared since this directory's documents were written are built from them now.
  for (const collection of Object.values(collections)) await collection.buildMissingIndexes(meta, writer);

  let closed = false;
  return {
    ...(collections as unknown as Collections),
    kind: 'embedded',
    async ping() {
      if (!writer.healthy)
        throw new StoreUnavailableError(
          new Error(closed ? 'store closed' : 'the last write failed; waiting for the disk to take writes again'),
        );
    },
    async close() {
      if (closed) return;
      closed = true;
      await writer.close();
      await env.close();
      await lock.release();
    },
  };
}
