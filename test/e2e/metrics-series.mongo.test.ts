import { MongoClient, type Document } from 'mongodb';
import { describe, inject } from 'vitest';
import { openMongoStore } from '../../store/mongo/index.js';
import { unique } from '../support/temp.js';
import { metricsSeriesFlow, type ArchiveRead } from './metrics-series-flow.js';

const uri = inject('mongoUri');
const db = unique('e2e');

/** Every index a plan names: MongoDB's IXSCAN stages say `indexName`; FerretDB 2 explains PostgreSQL's plan, whose index scans say `Index Name`. */
function indexesIn(plan: unknown, found: string[] = []): string[] {
  if (Array.isArray(plan)) for (const p of plan) indexesIn(p, found);
  else if (plan && typeof plan === 'object')
    for (const [key, value] of Object.entries(plan)) {
      if ((key === 'indexName' || key === 'Index Name') && typeof value === 'string') found.push(value);
      else indexesIn(value, found);
    }
  return found;
}

/** What the server plans for the read the adapter sends (store/mongo/mongo-collection.ts `find`), asked of it with explain. */
async function indexOf({ filter, options }: ArchiveRead): Promise<string | null> {
  const client = await MongoClient.connect(uri!);
  try {
    const plan = await client
      .db(db)
      .collection('boardStatsDays')
      .find(filter as Document)
      .sort(Object.fromEntries(options?.sort ?? [['_id', 1]]))
      .explain('queryPlanner');
    return indexesIn(plan)[0] ?? null;
  } finally {
    await client.close();
  }
}

describe.skipIf(!uri)('mongo', () => {
  metricsSeriesFlow(
    'mongo',
    async () => ({
      store: await openMongoStore({ uri: uri!, db }),
      drop: async () => {
        const client = await MongoClient.connect(uri!);
        await client.db(db).dropDatabase();
        await client.close();
      },
    }),
    indexOf,
  );
});
