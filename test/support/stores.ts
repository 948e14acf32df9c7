// Throwaway stores for suites that run on each adapter.
import type { Store } from '../../store/ports/store.js';
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

