// A paid upgrade survives a crash at each step of the webhook on MongoDB (MONGODB_URI; the flow:
// billing-crash-flow.ts).
import { describe, inject } from 'vitest';
import { openMongoStore } from '../../store/mongo/index.js';
import { unique } from '../support/temp.js';
import { crashFlow } from './billing-crash-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  crashFlow('mongo', async () => {
    const db = unique('crash');
    return {
      env: { STORE: 'mongo', MONGODB_URI: uri!, MONGODB_DB: db },
      open: () => openMongoStore({ uri: uri!, db }),
      // The killed node's sole-writer lease, ended as docs/operating.md tells an operator who knows
      // its holder is dead: the restart then serves at once, not after a term.
      afterKill: async () => {
        const { MongoClient } = await import('mongodb');
        const client = await MongoClient.connect(uri!);
        await client.db(db).collection<{ _id: string }>('writers').deleteOne({ _id: 'sole' });
        await client.close();
      },
      drop: async () => {
        const { MongoClient } = await import('mongodb');
        const client = await MongoClient.connect(uri!);
        await client.db(db).dropDatabase();
        await client.close();
      },
    };
  });
});
