import { describe, expect, inject, it } from 'vitest';
import { openMongoStore } from '../../store/mongo/index.js';
import { DuplicateKeyError, eventId, newBoardRecord, type EventRecord } from '../../store/ports/store.js';
import { dropPrefixed as dropPrefixedIn } from '../support/mongo-prefixed.js';
import { unique } from '../support/temp.js';
import { storeContract } from './contract.js';

const uri = inject('mongoUri');
const prefixes = new Map<object, string>();

/** Drops a test's collections (their names start with its prefix). */
async function dropPrefixed(prefix: string): Promise<void> {
  const { MongoClient } = await import('mongodb');
  const client = await MongoClient.connect(uri!);
  await dropPrefixedIn(client.db('board_test'), prefix);
  await client.close();
}

describe.skipIf(!uri)('mongo adapter', () => {
  storeContract('mongo', {
    async open() {
      const prefix = `${unique('t')}_`;
      const store = await openMongoStore({ uri: uri!, db: 'board_test', prefix });
      prefixes.set(store, prefix);
      return store;
    },
    async cleanup(store) {
      await dropPrefixed(prefixes.get(store)!);
      await store.close();
    },
  });
});

describe.skipIf(!uri)('mongo adapter: events kept unique by their id', () => {
  const events = (prefix: string) => ({
    async indexes() {
      const { MongoClient } = await import('mongodb');
      const client = await MongoClient.connect(uri!);
      try {
        const list = await client.db('board_test').collection(`${prefix}events`).listIndexes().toArray();
        return list.map((i) => ({ name: i.name as string, key: i.key as Record<string, number>, unique: !!i.unique }));
      } finally {
        await client.close();
      }
    },
  });

  async function ferret(): Promise<boolean> {
    const { MongoClient } = await import('mongodb');
    const client = await MongoClient.connect(uri!);
    try {
      return !!(await client.db('board_test').admin().command({ buildInfo: 1 })).ferretdb;
    } finally {
      await client.close();
    }
  }

  const event = (boardId: string, seq: number, id = eventId(boardId, seq)): EventRecord => ({
    _id: id,
    version: 1,
    boardId,
    seq,
    type: 'item.created',
    actor: 'user:x',
    workId: `W-${seq}`,
    at: 1000 + seq,
    data: { n: seq },
  });

  it('refuses an event whose id is not its board and seq, and a second of the same seq; FerretDB keeps no key index for it', async () => {
    const prefix = `${unique('t')}_`;
    const store = await openMongoStore({ uri: uri!, db: 'board_test', prefix });
    try {
      const board = unique('board');
      await store.events.insert(event(board, 1));
      await expect(store.events.insert(event(board, 2, unique('ev')))).rejects.toThrow(/_id must be/);
      await expect(store.events.insertMissing([event(board, 3, `${board}:4`)])).rejects.toThrow(/_id must be/);
      await expect(store.events.insert({ ...event(board, 1), data: { again: true } })).rejects.toBeInstanceOf(
        DuplicateKeyError,
      );
      expect(await store.events.count({ boardId: board })).toBe(1);
      const indexes = await events(prefix).indexes();
      if (await ferret()) {
        // The plain index for reads, and nothing keyed: the _id's own index holds the key.
        expect(indexes.map((i) => i.name).sort()).toEqual(['_id_', 'boardId_seq_fields']);
        expect(indexes.find((i) => i.name === 'boardId_seq_fields')).toMatchObject({ key: { boardId: 1, seq: 1 } });
      } else {
        expect(indexes.find((i) => i.name === 'boardId_seq')).toMatchObject({
          key: { boardId: 1, seq: 1 },
          unique: true,
        });
      }
    } finally {
      await store.close();
      await dropPrefixed(prefix);
    }
  });

  it('drops the key index an earlier version made on FerretDB at start, and reads its events without their key fields', async () => {
    if (!(await ferret())) return; // MongoDB keeps the index as declared: nothing changes there
    const prefix = `${unique('t')}_`;
    const { MongoClient } = await import('mongodb');
    const client = await MongoClient.connect(uri!);
    const board = unique('board');
    try {
      // As an earlier version left it: a unique key field, its index, the plain index beside it.
      const old = client.db('board_test').collection(`${prefix}events`);
      await old.createIndex({ _key_boardId_seq: 1 }, { name: 'boardId_seq', unique: true });
      await old.createIndex({ boardId: 1, seq: 1 }, { name: 'boardId_seq_fields' });
      await old.insertOne({ ...event(board, 1), _key_boardId_seq: { boardId: board, seq: 1 } } as never);
      const store = await openMongoStore({ uri: uri!, db: 'board_test', prefix });
      try {
        expect((await events(prefix).indexes()).map((i) => i.name).sort()).toEqual(['_id_', 'boardId_seq_fields']);
        await store.events.insertMissing([event(board, 1), event(board, 2), event(board, 3)]);
        expect(await store.events.find({ boardId: board }, { sort: [['seq', 1]] })).toEqual([
          event(board, 1),
          event(board, 2),
          event(board, 3),
        ]);
      } finally {
        await store.close();
      }
      // A second start finds it gone and leaves the rest as it is.
      const again = await openMongoStore({ uri: uri!, db: 'board_test', prefix });
      await again.close();
      expect((await events(prefix).indexes()).map((i) => i.name).sort()).toEqual(['_id_', 'boardId_seq_fields']);
    } finally {
      await client.close();
      await dropPrefixed(prefix);
    }
  });
});

describe.skipIf(!uri)('mongo adapter: the header’s intent packed', () => {
  it('keeps the last commit’s intent packed in the header, and reads one an earlier version kept unpacked', async () => {
    const prefix = `${unique('t')}_`;
    const { MongoClient, Binary, BSON } = await import('mongodb');
    const { inflateRawSync } = await import('node:zlib');
    const client = await MongoClient.connect(uri!);
    const headers = client.db('board_test').collection<{ _id: string } & Record<string, unknown>>(`${prefix}boards`);
    const boardId = unique('board');
    const work = (n: number) => ({ workId: `W-${n}`, title: `item ${n} ${'words '.repeat(20)}`, state: 'ready' });
    const events = Array.from({ length: 40 }, (_, i) => ({
      _id: eventId(boardId, i + 1),
      boardId,
      seq: i + 1,
      type: 'item.created',
      actor: 'user:x',
      workId: `W-${i + 1}`,
      at: 1000 + i,
      data: { item: work(i + 1) },
    }));
    const put = Array.from({ length: 40 }, (_, i) => work(i + 1));
    let store = await openMongoStore({ uri: uri!, db: 'board_test', prefix });
    try {
      await store.boards.insert(newBoardRecord(boardId));
      expect(await store.boards.commit(boardId, 1, { lastSeq: 40, outbox: events }, { put, removed: [] })).toBe(true);
      const raw = (await headers.findOne({ _id: boardId }))!;
      const intent = raw.intent as { v: number; packed: InstanceType<typeof Binary> };
      expect(intent.v).toBe(2);
      expect(intent.packed).toBeInstanceOf(Binary);
      const unpacked = BSON.deserialize(inflateRawSync(intent.packed.value()));
      expect(unpacked).toMatchObject({ v: 2, put, removed: [], events });
      // Packed, it is a fraction of what it holds.
      expect(intent.packed.length()).toBeLessThan(BSON.calculateObjectSize(unpacked) / 4);
      const before = await store.boards.load(boardId);
      expect(before!.items).toHaveLength(40);
      expect(before!.record.outbox).toEqual(events);

      // As an earlier version wrote it: unpacked, its item versions not yet in the log.
      await store.close();
      await client.db('board_test').collection(`${prefix}boardItems`).deleteMany({ boardId });
      await headers.updateOne({ _id: boardId }, { $set: { intent: unpacked } });
      store = await openMongoStore({ uri: uri!, db: 'board_test', prefix });
      const after = await store.boards.load(boardId);
      expect(after!.record).toEqual(before!.record);
      expect(after!.items.sort((a, b) => a.workId.localeCompare(b.workId))).toEqual(
        before!.items.sort((a, b) => a.workId.localeCompare(b.workId)),
      );
      // And a commit over it packs again.
      expect(await store.boards.commit(boardId, 2, { lastSeq: 40 }, { put: [work(41)], removed: ['W-1'] })).toBe(true);
      expect(((await headers.findOne({ _id: boardId }))!.intent as { packed: unknown }).packed).toBeInstanceOf(Binary);
      const last = await store.boards.load(boardId);
      expect(last!.items.map((i) => i.workId).sort()).toEqual([...put.slice(1).map((i) => i.workId), 'W-41'].sort());
    } finally {
      await store.close();
      await client.close();
      await dropPrefixed(prefix);
    }
  });
});
