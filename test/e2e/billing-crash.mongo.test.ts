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
      drop: async () => {
        const { MongoClient } = await import('mongodb');
        const client = await MongoClient.connect(uri!);
        await client.db(db).dropDatabase();
        await client.close();
      },
    };
  });
});
