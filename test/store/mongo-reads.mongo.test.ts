// Finds on MongoDB ask for one batch (store/mongo/mongo-collection.ts, firstBatchOnly): FerretDB 2
// keeps a cursor for any other find, at 15-40 ms of its CPU each. What the commands say is read
// from the driver's command monitoring; what the finds return, from the collection.
import { MongoClient, type CommandStartedEvent, type Document } from 'mongodb';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { MongoCollection } from '../../store/mongo/mongo-collection.js';
import type { Doc } from '../../store/ports/store.js';
import { unique } from '../support/temp.js';

const uri = inject('mongoUri');
const DB = 'board_test';

type Row = Doc & { n: number; pad?: string };

describe.skipIf(!uri)('mongo adapter: finds in one batch', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A collection of the test's own, its rows inserted, and every command the client sends from then on. */
  async function rows(docs: Row[]) {
    const client = await MongoClient.connect(uri!, { monitorCommands: true });
    const name = unique('reads');
    const driver = client.db(DB).collection<Document>(name);
    cleanups.push(async () => {
      await driver.drop().catch(() => undefined);
      await client.close();
    });
    for (let i = 0; i < docs.length; i += 100) await driver.insertMany(docs.slice(i, i + 100) as Document[]);
    const sent: CommandStartedEvent[] = [];
    client.on('commandStarted', (e) => sent.push(e));
    return { collection: new MongoCollection<Row>(name, [], driver), sent };
  }

  const numbered = (count: number, pad = ''): Row[] =>
    Array.from({ length: count }, (_, i) => ({ _id: `r${String(i).padStart(4, '0')}`, version: 1, n: i % 7, pad }));

  it('asks for a single batch, sorted and limited as asked, and leaves no cursor to resume', async () => {
    const { collection, sent } = await rows(numbered(300));
    const page = await collection.find({ n: 3 }, { sort: [['_id', -1]], skip: 2, limit: 5 });
    expect(page.map((r) => r._id)).toEqual(['r0283', 'r0276', 'r0269', 'r0262', 'r0255']);
    const all = await collection.select({ n: { $gte: 0 } }, ['n']);
    expect(all).toHaveLength(300);
    expect(all[0]).toEqual({ _id: 'r0000', n: 0 });
    const finds = sent.filter((e) => e.commandName === 'find');
    expect(finds.map((e) => e.command.singleBatch)).toEqual([true, true]);
    expect(sent.map((e) => e.commandName)).not.toContain('getMore');
    expect(sent.map((e) => e.commandName)).not.toContain('aggregate');
  });

  it('counts with the count command, not an aggregation, with and without a filter', async () => {
    const { collection, sent } = await rows(numbered(50));
    expect(await collection.count({ n: 2 })).toBe(7);
    expect(await collection.count({})).toBe(50);
    expect(sent.map((e) => e.commandName)).toEqual(['count', 'count']);
  });

  it('reads a result larger than one batch whole: past 16 MiB the batch is cut, and the rest is read', async () => {
    const { collection, sent } = await rows(numbered(20, 'x'.repeat(1024 * 1024)));
    const all = await collection.select({ n: { $gte: 0 } }, ['_id', 'pad']);
    expect(all.map((r) => r._id)).toEqual(numbered(20).map((r) => r._id));
    expect(all.every((r) => r.pad?.length === 1024 * 1024)).toBe(true);
    // The single batch came back short (at most 16 MiB), the count said so, and a cursor read the rest.
    expect(sent.map((e) => e.commandName).slice(0, 3)).toEqual(['find', 'count', 'find']);
  });
});
