// The MongoDB store: one driver collection per port collection, indexes ensured at start.
import {
  MongoClient,
  MongoServerError,
  ReadPreference,
  type Collection,
  type CreateIndexesOptions,
  type Db,
  type Document,
  type IndexSpecification,
} from 'mongodb';
import { COLLECTION_NAMES, SCHEMA, StoreUnavailableError, type Collections, type Store } from '../ports/store.js';
import { clientOptions, REPORT_COLLECTIONS } from './client-options.js';
import { CompoundKeys, driverIndexes, retiredIndexes } from './compound-unique.js';
import { MongoBoards } from './mongo-boards.js';
import { MongoCollection } from './mongo-collection.js';
import { MongoUsage } from './mongo-usage.js';
import { guarded, writesGuarded } from './lease-guard.js';
import { holdWriterLease, type WriterDoc, type WriterLease, type WriterOptions } from './writer-lease.js';

export { LEASE_TERM_MS, StoreInUseError, type WriterOptions } from './writer-lease.js';

export interface MongoStoreOptions {
  uri: string;
  db: string;
  /** Prefix for collection names, so parallel test suites stay apart. */
  prefix?: string;
  /** The boards' clock for their clean-up delays (tests move it). */
  clock?: () => number;
  /** How long close waits for the calls under way before it closes the client anyway (tests shorten it). */
  closeWaitMs?: number;
  /**
   * Who this node writes as (writer-lease.ts): `sole` holds the store's sole-writer lease, taken before
   * anything is written and released by close; `shared` keeps a heartbeat beside other nodes. Without
   * it (tests, tools) the store takes no part in either.
   */
  writer?: WriterOptions;
}

/** How long close waits for the calls under way: a server that stopped answering must not hold up a node's shutdown. */
const CLOSE_WAIT_MS = 10_000;

export async function openMongoStore(options: MongoStoreOptions): Promise<Store> {
  const client = new MongoClient(options.uri, clientOptions(options.uri));
  try {
    await client.connect();
  } catch (e) {
    throw new StoreUnavailableError(e);
  }
  const db = client.db(options.db);
  const prefix = options.prefix ?? '';
  const server = await wireServerOf(db);
  if (server === 'ferretdb1') {
    await client.close();
    throw new Error(
      'FerretDB 1.x is not supported: it does not apply a version-conditional update atomically, ' +
        'and it reads every document of a collection for every query. Use MongoDB, or FerretDB 2 on ' +
        'PostgreSQL with DocumentDB (docs/operating.md, "MongoDB in production").',
    );
  }
  let lease: WriterLease | null = null;
  if (options.writer) {
    const writers = db.collection<WriterDoc>(`${prefix}writers`, { readPreference: ReadPreference.primary });
    lease = await holdWriterLease(writers, options.db, options.writer).catch(async (e: unknown) => {
      await client.close();
      throw e;
    });
  }
  try {
    return await openCollections(client, db, prefix, server === 'ferretdb2', lease, options);
  } catch (e) {
    await lease?.release();
    throw e;
  }
}

async function openCollections(
  client: MongoClient,
  db: Db,
  prefix: string,
  keyed: boolean,
  lease: WriterLease | null,
  options: MongoStoreOptions,
): Promise<Store> {
  const ensure = async (
    name: string,
    indexes: readonly { name: string; fields: readonly string[]; unique: boolean }[],
    retired: readonly string[] = [],
  ) => {
    const driver = db.collection<Document>(
      `${prefix}${name}`,
      REPORT_COLLECTIONS.has(name) ? {} : { readPreference: ReadPreference.primary },
    );
    for (const name of [...retired, ...retiredIndexes(indexes, keyed)])
      if (await hasIndex(driver, name)) await dropIndex(driver, name);
    for (const index of driverIndexes(indexes, keyed)) await createIndex(driver, index.keys, index.options);
    return lease ? writesGuarded(driver, lease) : driver;
  };
  // A board's item versions and the staged parts of large commits (mongo-boards.ts) sit beside its header.
  // The versions are read by `_id` range alone (`logRange`); the `boardId_v` index an earlier version
  // read them by goes at start, on MongoDB and FerretDB alike (docs/operating.md: upgrade every node).
  const log = await ensure('boardItems', [], ['boardId_v']);
  const staging = await ensure('boardStaging', [
    { name: 'stage', fields: ['stage'], unique: false },
    { name: 'boardId_v', fields: ['boardId', 'v'], unique: false },
  ]);
  const entries = await Promise.all(
    COLLECTION_NAMES.map(async (name) => {
      const driver = await ensure(name, SCHEMA[name]);
      const collection =
        name === 'boards'
          ? new MongoBoards(driver, log, staging, options.clock)
          : name === 'usage'
            ? new MongoUsage(name, SCHEMA[name], driver, keyed ? CompoundKeys.of(SCHEMA[name]) : null, !keyed)
            : new MongoCollection(name, SCHEMA[name], driver, [], keyed ? CompoundKeys.of(SCHEMA[name]) : null);
      return [name, lease ? guarded(collection, lease) : collection] as const;
    }),
  );
  return {
    ...(Object.fromEntries(entries) as unknown as Collections),
    kind: 'mongo',
    async ping() {
      try {
        await db.command({ ping: 1 });
      } catch (e) {
        throw new StoreUnavailableError(e);
      }
    },
    async close() {
      // Each collection waits for what it sent (MongoCollection.close), for a while.
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<false>(
        (resolve) => (timer = setTimeout(() => resolve(false), options.closeWaitMs ?? CLOSE_WAIT_MS)),
      );
      const landed = await Promise.race([
        Promise.all(entries.map(([, collection]) => collection.close())).then(() => true),
        waited,
      ]);
      clearTimeout(timer);
      // Once the last write landed, so the node that takes the lease next sees none of ours land
      // after; a write still under way leaves the lease to lapse in a term.
      if (landed) await lease?.release();
      await client.close();
    },
    replication: () => replicationOf(db),
  };
}

/**
 * Creates an index, or finds it made. FerretDB 2 (DocumentDB) may answer "deadlock detected" when
 * two nodes starting at once create the same indexes on a new database (PostgreSQL aborts one of
 * the two builds; FerretDB passes PostgreSQL's error on without a code of its own); MongoDB builds
 * them once and answers both. A build the server refused is tried again, a little later, up to five
 * times: a refusal for any other reason (options that clash) is the same the fifth time.
 */
async function createIndex(driver: Collection<Document>, keys: IndexSpecification, options: CreateIndexesOptions) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await driver.createIndex(keys, options);
    } catch (e) {
      if (attempt >= 5 || !(e instanceof MongoServerError)) throw e;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt + Math.random() * 100));
    }
  }
}

/** Whether a collection has an index of that name (a collection not made yet has none). */
async function hasIndex(driver: Collection<Document>, name: string): Promise<boolean> {
  try {
    return await driver.indexExists(name);
  } catch (e) {
    if (e instanceof MongoServerError && e.code === NAMESPACE_NOT_FOUND) return false;
    throw e;
  }
}
const NAMESPACE_NOT_FOUND = 26;

/** Drops an index an earlier version made; one another node dropped meanwhile is gone as well. */
async function dropIndex(driver: Collection<Document>, name: string): Promise<void> {
  try {
    await driver.dropIndex(name);
  } catch (e) {
    if (!(e instanceof MongoServerError) || (await hasIndex(driver, name))) throw e;
  }
}

/** What hello says of the replica set, and each member's state when replSetGetStatus is allowed (not on a standalone server, FerretDB, or without the role). */
async function replicationOf(db: Db): Promise<Record<string, unknown>> {
  const admin = db.admin();
  const hello = await admin.command({ hello: 1 });
  const state: Record<string, unknown> = {
    setName: hello.setName ?? null,
    isWritablePrimary: hello.isWritablePrimary ?? hello.ismaster ?? null,
    primary: hello.primary ?? null,
    hosts: Array.isArray(hello.hosts) ? hello.hosts : [],
    members: null,
  };
  if (!hello.setName) return state;
  try {
    const status = await admin.command({ replSetGetStatus: 1 });
    const members = (status.members as Document[] | undefined) ?? [];
    const primaryAt = (members.find((m) => m.stateStr === 'PRIMARY')?.optimeDate as Date | undefined)?.getTime();
    state.members = members.map((m) => {
      const at = (m.optimeDate as Date | undefined)?.getTime();
      return {
        name: m.name,
        state: m.stateStr,
        health: m.health,
        lagMs: primaryAt !== undefined && at !== undefined ? primaryAt - at : null,
      };
    });
  } catch {
    // not allowed here: hello is what there is
  }
  return state;
}

/**
 * Which server answers: FerretDB 2 checks compound unique indexes slowly (compound-unique.ts, the
 * one difference the adapter handles); FerretDB 1.x is refused (see openMongoStore). FerretDB 1.x
 * names its version `ferretdbVersion`, 2.x `ferretdb.version`; MongoDB neither.
 */
async function wireServerOf(db: Db): Promise<'mongodb' | 'ferretdb1' | 'ferretdb2'> {
  const info = await db.admin().command({ buildInfo: 1 });
  if ('ferretdbVersion' in info) return 'ferretdb1';
  return info.ferretdb ? 'ferretdb2' : 'mongodb';
}
