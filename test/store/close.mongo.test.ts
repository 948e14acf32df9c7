// Closing the MongoDB store (store/mongo/index.ts): the log inserts of the last commit, and any
// call a caller did not wait for, land before close resolves, and nothing lands after it. A server carries out what a client sent before it
// closed: the inserts used to land after close, into a database a test had dropped meanwhile,
// which FerretDB (SQLite) then created again beside the old one's files, and crashed (SIGBUS).
import { MongoClient } from 'mongodb';
import { createServer, connect, type Socket } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import { openMongoStore } from '../../store/mongo/index.js';
import { newBoardRecord, StoreUnavailableError, type StoredItem } from '../../store/ports/store.js';
import { unique } from '../support/temp.js';
import { quietFor, until } from '../support/until.js';

const uri = inject('mongoUri');

/** 3,000 items: a staged commit whose log inserts take three round trips. */
const ITEMS = 3000;
const items = (title: string): StoredItem[] =>
  Array.from({ length: ITEMS }, (_, i) => ({ workId: `W-${i + 1}`, title }) as StoredItem);

describe.skipIf(!uri)('closing the MongoDB store', () => {
  it('lands the last commit’s log inserts before close resolves, refuses every later call, and nothing lands after', async () => {
    const db = unique('close');
    const store = await openMongoStore({ uri: uri!, db });
    const client = await MongoClient.connect(uri!);
    try {
      await store.boards.insert({ ...newBoardRecord('b1'), nextWorkSeq: ITEMS + 1 });
      expect(await store.boards.commit('b1', 1, { lastSeq: 1 }, { put: items('first'), removed: [] })).toBe(true);
      expect(await store.boards.commit('b1', 2, { lastSeq: 2 }, { put: items('second'), removed: [] })).toBe(true);
      await store.close(); // the second commit's log inserts were still under way

      const log = client.db(db).collection('boardItems');
      expect(await log.countDocuments({ boardId: 'b1', v: 3 })).toBe(ITEMS);
      await expect(store.boards.get('b1')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.tokens.insert({ _id: 't' } as never)).rejects.toBeInstanceOf(StoreUnavailableError);

      await client.db(db).dropDatabase();
      await quietFor(1000); // proves no write of the closed store's lands late (it would make the database again)
      const { databases } = await client.db().admin().listDatabases({ nameOnly: true });
      expect(databases.map((d) => d.name)).not.toContain(db);
    } finally {
      await client
        .db(db)
        .dropDatabase()
        .catch(() => undefined);
      await client.close();
    }
  });

  it('lands a write no caller waited for before close resolves', async () => {
    const db = unique('close');
    const store = await openMongoStore({ uri: uri!, db });
    const client = await MongoClient.connect(uri!);
    try {
      const events = Array.from({ length: ITEMS }, (_, i) => ({
        _id: `b1:${i + 1}`,
        version: 1,
        boardId: 'b1',
        seq: i + 1,
        type: 'item.created',
        actor: 'user:a',
        workId: null,
        at: i,
        data: {},
      }));
      void store.events.insertMissing(events).catch(() => undefined); // as a token's last use is written: nobody waits
      await store.close();
      expect(await client.db(db).collection('events').countDocuments({ boardId: 'b1' })).toBe(ITEMS);
    } finally {
      await client
        .db(db)
        .dropDatabase()
        .catch(() => undefined);
      await client.close();
    }
  });

  it('closes anyway, after a while, when the server stops answering what is under way', async () => {
    // A proxy in front of the server that can stop passing its answers on.
    const target = new URL(uri!);
    let stalled = false;
    let askedWhileStalled = 0;
    const sockets: Socket[] = [];
    const proxy = createServer((inbound) => {
      const outbound = connect(Number(target.port), target.hostname);
      sockets.push(inbound, outbound);
      inbound.pipe(outbound);
      inbound.on('data', () => void (stalled && askedWhileStalled++));
      outbound.on('data', (chunk: Buffer) => void (stalled || inbound.write(chunk)));
      inbound.on('error', () => outbound.destroy());
      outbound.on('error', () => inbound.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const db = unique('close');
    const store = await openMongoStore({
      uri: `mongodb://127.0.0.1:${(proxy.address() as { port: number }).port}/?directConnection=true`,
      db,
      closeWaitMs: 500,
    });
    try {
      stalled = true;
      const unanswered = store.events.count({ boardId: 'b1' }).catch((e: unknown) => e);
      await until(() => askedWhileStalled > 0, { what: 'the count reaching the server' });
      const started = performance.now();
      await store.close();
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(450); // it waited for the unanswered call, up to the bound
      expect(waited).toBeLessThan(5000);
      expect(await unanswered).toBeInstanceOf(StoreUnavailableError);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
      const client = await MongoClient.connect(uri!);
      await client
        .db(db)
        .dropDatabase()
        .catch(() => undefined);
      await client.close();
    }
  });
});
