import { describe, inject } from 'vitest';
import { openMongoStore } from '../../store/mongo/index.js';
import { unique } from '../support/temp.js';
import { storeContract } from './contract.js';

const uri = inject('mongoUri');
const prefixes = new Map<object, string>();

describe.skipIf(!uri)('mongo adapter', () => {
  storeContract('mongo', {
    async open() {
      const prefix = `${unique('t')}_`;
      const store = await openMongoStore({ uri: uri!, db: 'board_test', prefix });
      prefixes.set(store, prefix);
      return store;
    },
    async cleanup(store) {
      const prefix = prefixes.get(store)!;
      const { MongoClient } = await import('mongodb');
      const client = await MongoClient.connect(uri!);
      const db = client.db('board_test');
      for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray())
        if (name.startsWith(prefix))
          await db
            .collection(name)
            .drop()
            .catch(() => undefined);
      await client.close();
      await store.close();
    },
  });
});
