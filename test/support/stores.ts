// Throwaway stores for suites that run on each adapter.
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../../store/ports/store.js';
import { startTestServer, type TestServer } from './server.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { openMongoStore } from '../../store/mongo/index.js';
import { tempDir, unique } from './temp.js';

export interface OpenedStore {
  store: Store;
  drop: () => Promise<void>;
}

export async function embeddedStore(): Promise<OpenedStore> {
  const dir = await tempDir();
  return { store: await openEmbeddedStore(dir.path), drop: dir.remove };
}

/** A database of its own on the given server, dropped afterwards. */
export function mongoStore(uri: string): () => Promise<OpenedStore> {
  return async () => {
    const db = unique('e2e');
    const store = await openMongoStore({ uri, db });
    return {
      store,
      drop: async () => {
        const { MongoClient } = await import('mongodb');
        const client = await MongoClient.connect(uri);
        await client.db(db).dropDatabase();
        await client.close();
      },
    };
  };
}

/** A fresh store of `open` for the enclosing suite: opened before it, closed and dropped after. */
export function useStore(open: () => Promise<OpenedStore> = embeddedStore): { store: Store } {
  const held = {} as { store: Store };
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const opened = await open();
    drop = opened.drop;
    held.store = opened.store;
  });
  afterAll(async () => {
    await held.store.close();
    await drop();
  });
  return held;
}

/** Serves a fresh store of `open` for the enclosing suite: started before it, stopped and dropped after. */
export function serveStore(open: () => Promise<OpenedStore>, env: Record<string, string> = {}): { srv: TestServer } {
  const served = {} as { srv: TestServer };
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const opened = await open();
    drop = opened.drop;
    served.srv = await startTestServer(env, opened.store);
  });
  afterAll(async () => {
    await served.srv.stop();
    await drop();
  });
  return served;
}
