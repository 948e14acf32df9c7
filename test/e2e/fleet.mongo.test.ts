import { describe, inject } from 'vitest';
import { openMongoStore } from '../../store/mongo/index.js';
import { unique } from '../support/temp.js';
import { fleetFlow } from './fleet-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  fleetFlow('mongo', async () => {
    const db = unique('e2e');
    const store = await openMongoStore({ uri: uri!, db });
    return {
      store,
      drop: async () => {
        const { MongoClient } = await import('mongodb');
        const client = await MongoClient.connect(uri!);
        await client.db(db).dropDatabase();
        await client.close();
      },
    };
  });
});
