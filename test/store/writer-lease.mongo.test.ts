// The MongoDB store's writers (store/mongo/writer-lease.ts), on a real wire server (MONGODB_URI),
// with a short term: one sole writer at a time, never one beside a node with REDIS_URL, a silent
// holder taken over after a term and not before, a holder taken over or cut off from the store told
// to stop. The nodes themselves: test/e2e/writer-lease.mongo.test.ts.
import { MongoClient, type Collection } from 'mongodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { holdWriterLease, StoreInUseError, type WriterDoc, type WriterLease } from '../../store/mongo/writer-lease.js';
import { openMongoStore } from '../../store/mongo/index.js';
import { newBoardRecord, StoreUnavailableError, type StoredItem } from '../../store/ports/store.js';
import { tcpProxy } from '../support/tcp-proxy.js';
import { unique } from '../support/temp.js';
import { quietFor, until } from '../support/until.js';

const uri = inject('mongoUri');
const TERM = 2_000;

/** A node's part in the test: its lease, and what it was told. */
interface Held {
  lease: WriterLease;
  lost: string[];
  failed: unknown[];
  tookOver: string[];
}

describe.skipIf(!uri)('the writers of a MongoDB store', () => {
  let client: MongoClient;
  let writers: Collection<WriterDoc>;
  let db: string;
  const held: Held[] = [];

  beforeAll(async () => {
    client = await MongoClient.connect(uri!);
  });
  afterAll(async () => {
    await client.close();
  });
  beforeEach(() => {
    db = unique('writers');
    writers = client.db(db).collection<WriterDoc>('writers');
  });
  afterEach(async () => {
    for (const h of held.splice(0)) await h.lease.release();
    await client.db(db).dropDatabase();
  });

  async function hold(mode: 'sole' | 'shared', node: string, on = writers, termMs = TERM): Promise<Held> {
    const h = { lost: [], failed: [], tookOver: [] } as unknown as Held;
    h.lease = await holdWriterLease(on, db, {
      mode,
      node,
      termMs,
      onLost: (m) => h.lost.push(m),
      onRenewalFailed: (e) => h.failed.push(e),
      onTookOver: (m) => h.tookOver.push(m),
    });
    held.push(h);
    return h;
  }

  /** Resolves with what holding refused with, and how long it took. */
  async function refusal(mode: 'sole' | 'shared', node: string): Promise<{ error: unknown; ms: number }> {
    const started = performance.now();
    const error = await hold(mode, node).then(
      () => null,
      (e: unknown) => e,
    );
    return { error, ms: performance.now() - started };
  }

  /** The document a node that died would leave: never renewed again. */
  const deadDoc = (id: string, kind: 'sole' | 'shared', node: string): WriterDoc => ({
    _id: id,
    kind,
    node,
    tenure: 'dead',
    beat: 7,
    renewedAt: new Date(),
  });

  it('refuses a second sole writer while the first renews, naming it, within a renewal or two', async () => {
    await hold('sole', 'node-a');
    const { error, ms } = await refusal('sole', 'node-b');
    expect(error).toBeInstanceOf(StoreInUseError);
    expect((error as Error).message).toMatch(/in use by node node-a, its sole writer/);
    expect((error as Error).message).toMatch(/set REDIS_URL on every node; else stop node-a/);
    expect(ms).toBeLessThan(TERM);
    expect(await writers.findOne({ _id: 'sole' })).toMatchObject({ node: 'node-a' });
  });

  it('gives the lease to the next node at once once released', async () => {
    const a = await hold('sole', 'node-a');
    await a.lease.release();
    expect(await writers.countDocuments({})).toBe(0);
    const started = performance.now();
    await hold('sole', 'node-b');
    expect(performance.now() - started).toBeLessThan(TERM / 2);
    expect(await writers.findOne({ _id: 'sole' })).toMatchObject({ node: 'node-b', beat: 0 });
  });

  it('takes a lease its holder stopped renewing after a whole term, not before, even under the same name', async () => {
    await writers.insertOne(deadDoc('sole', 'sole', 'node-a'));
    const started = performance.now();
    const a = await hold('sole', 'node-a');
    expect(performance.now() - started).toBeGreaterThanOrEqual(TERM);
    expect(a.tookOver.join()).toMatch(/from node node-a, unrenewed for 2 s/);
    expect(await writers.findOne({ _id: 'sole' })).not.toMatchObject({ tenure: 'dead' });
  });

  it('renews the lease while held', async () => {
    await hold('sole', 'node-a');
    const before = (await writers.findOne({ _id: 'sole' }))!.beat;
    await until(async () => (await writers.findOne({ _id: 'sole' }))!.beat >= before + 2, TERM * 2);
  });

  it('tells a holder whose lease another node took to stop, naming that node', async () => {
    const a = await hold('sole', 'node-a');
    // What a node that found the lease silent (this one paused for a term) leaves.
    await writers.updateOne({ _id: 'sole' }, { $set: { node: 'node-b', tenure: 'b', beat: 0 } });
    await until(() => a.lost.length > 0, TERM * 2);
    expect(a.lost[0]).toMatch(/lost the sole-writer lease of MongoDB database .*: node node-b holds it now/);
    await quietFor(TERM / 2);
    expect(a.lost).toHaveLength(1); // told once, and no renewal after
  });

  it('keeps the lease through a store outage shorter than the term, and stops a holder cut off for the term', async () => {
    const term = 6_000; // the holder stops 1 s before a term since its last renewal, so 5 s
    const proxy = await tcpProxy(Number(new URL(uri!).port || 27017), new URL(uri!).hostname);
    const cutClient = await MongoClient.connect(`mongodb://127.0.0.1:${proxy.port}/`, {
      serverSelectionTimeoutMS: 300,
      connectTimeoutMS: 300,
      directConnection: true,
    });
    const beat = async () => (await writers.findOne({ _id: 'sole' }))!.beat;
    try {
      const a = await hold('sole', 'node-a', cutClient.db(db).collection<WriterDoc>('writers'), term);
      proxy.cut();
      await until(() => a.failed.length > 0, term);
      const during = await beat();
      proxy.restore();
      await until(async () => (await beat()) > during, term);
      expect(a.lost).toEqual([]);

      await until(async () => (await beat()) > during + 1, term); // a renewal after the outage, to count from
      const cutAt = performance.now();
      proxy.cut();
      await until(() => a.lost.length > 0, term * 2);
      const ms = performance.now() - cutAt;
      // It kept trying for most of the term, and stopped before a term since its last renewal ran out.
      expect(ms).toBeGreaterThan(term / 2);
      expect(ms).toBeLessThan(term);
      expect(a.lost[0]).toMatch(/could not renew the sole-writer lease .* for 5 s \(the store unreachable\)/);
    } finally {
      proxy.cut();
      await cutClient.close(true).catch(() => undefined);
      await proxy.close();
    }
  });

  it('refuses a node with REDIS_URL beside a live sole writer, and removes its heartbeat', async () => {
    await hold('sole', 'node-a');
    const { error, ms } = await refusal('shared', 'node-r');
    expect(error).toBeInstanceOf(StoreInUseError);
    expect((error as Error).message).toMatch(/in use by node node-a, its sole writer .* set REDIS_URL on node-a too/);
    expect(ms).toBeLessThan(TERM);
    expect(await writers.countDocuments({ kind: 'shared' })).toBe(0);
  });

  it('refuses a sole writer beside a live node with REDIS_URL, and gives its lease back', async () => {
    await hold('shared', 'node-r');
    await hold('shared', 'node-s');
    const { error } = await refusal('sole', 'node-a');
    expect(error).toBeInstanceOf(StoreInUseError);
    expect((error as Error).message).toMatch(/in use by node node-[rs], started with REDIS_URL/);
    expect(await writers.findOne({ _id: 'sole' })).toBeNull();
    // Nodes with REDIS_URL start beside each other at once.
    const started = performance.now();
    await hold('shared', 'node-t');
    expect(performance.now() - started).toBeLessThan(TERM / 2);
  });

  it('keeps a heartbeat per process: two nodes with REDIS_URL under one name (a rolling update) both go on', async () => {
    const old = await hold('shared', 'node-r');
    const next = await hold('shared', 'node-r');
    const beats = async () => (await writers.find({ node: 'node-r' }).toArray()).map((d) => d.beat);
    await until(async () => (await beats()).every((b) => b >= 2), TERM * 2);
    expect([old.lost, next.lost]).toEqual([[], []]);
  });

  it('clears a dead node’s heartbeat after a term, and a dead sole writer’s lease for a node with REDIS_URL', async () => {
    await writers.insertOne(deadDoc('shared:node-r', 'shared', 'node-r'));
    let started = performance.now();
    const a = await hold('sole', 'node-a');
    expect(performance.now() - started).toBeGreaterThanOrEqual(TERM);
    expect(a.tookOver.join()).toMatch(/cleared the heartbeats of nodes node-r/);
    expect(await writers.findOne({ _id: 'shared:node-r' })).toBeNull();
    await a.lease.release();

    await writers.insertOne(deadDoc('sole', 'sole', 'node-b'));
    started = performance.now();
    const r = await hold('shared', 'node-r');
    expect(performance.now() - started).toBeGreaterThanOrEqual(TERM);
    expect(r.tookOver.join()).toMatch(/cleared the sole-writer lease of node node-b/);
    expect(await writers.findOne({ _id: 'sole' })).toBeNull();
  });

  it('tells a node with REDIS_URL whose heartbeat a sole writer cleared to stop', async () => {
    const r = await hold('shared', 'node-r');
    await writers.deleteOne({ node: 'node-r' });
    await writers.insertOne({ ...deadDoc('sole', 'sole', 'node-a'), tenure: 'a' });
    await until(() => r.lost.length > 0, TERM * 2);
    expect(r.lost[0]).toMatch(/heartbeat of this node \(REDIS_URL\) .* was cleared by node node-a/);
  });

  it('has the store refuse calls once the term ran out unrenewed, before the timer that stops the node fires', async () => {
    const lost: string[] = [];
    const store = await openMongoStore({
      uri: uri!,
      db,
      writer: { mode: 'sole', node: 'node-a', termMs: TERM, onLost: (m) => lost.push(m) },
    });
    try {
      expect(await store.tokens.get('t')).toBeNull();
      // A paused process: nothing runs, no renewal, no timer, for a term.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, TERM);
      const call = store.tokens.get('t');
      const toldBefore = lost.length;
      await expect(call).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(toldBefore).toBe(0);
      await until(() => lost.length > 0, TERM);
      await expect(store.boards.load('b')).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await store.close();
    }
  });

  it('refuses a commit’s header write when the term ran out while the commit read the header', async () => {
    const store = await openMongoStore({
      uri: uri!,
      db,
      writer: { mode: 'sole', node: 'node-a', termMs: TERM, onLost() {} },
    });
    try {
      await store.boards.insert(newBoardRecord('b'));
      // This process's first commit to the board reads its header first (to catch up); the process
      // is paused past its term right after that read, before the header update is sent.
      const headers = (store.boards as unknown as { driver: { findOne: (...a: unknown[]) => Promise<unknown> } })
        .driver;
      const findOne = headers.findOne.bind(headers);
      let paused = false;
      headers.findOne = async (...args: unknown[]) => {
        const found = await findOne(...args);
        if (!paused) {
          paused = true;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, TERM);
        }
        return found;
      };
      const item = { workId: 'W-1', title: 'one' } as unknown as StoredItem;
      await expect(store.boards.commit('b', 1, { lastSeq: 1 }, { put: [item], removed: [] })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      expect(paused).toBe(true);
      expect(
        (
          await client
            .db(db)
            .collection('boards')
            .findOne({ _id: 'b' } as object)
        )?.version,
      ).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('takes the lease in openMongoStore before serving and releases it on close', async () => {
    const options = { uri: uri!, db, writer: { mode: 'sole' as const, node: 'node-a', termMs: TERM, onLost() {} } };
    const store = await openMongoStore(options);
    expect(await writers.findOne({ _id: 'sole' })).toMatchObject({ node: 'node-a' });
    await expect(openMongoStore({ ...options, writer: { ...options.writer, node: 'node-b' } })).rejects.toThrow(
      /in use by node node-a/,
    );
    await store.close();
    expect(await writers.findOne({ _id: 'sole' })).toBeNull();
    const next = await openMongoStore({ ...options, writer: { ...options.writer, node: 'node-b' } });
    expect(await writers.findOne({ _id: 'sole' })).toMatchObject({ node: 'node-b' });
    await next.close();
  });
});
