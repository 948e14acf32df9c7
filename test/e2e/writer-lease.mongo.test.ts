// Real nodes (`src/main.ts` processes) on one MongoDB-wire store (MONGODB_URI): a node without
// REDIS_URL is the store's sole writer, and another node, with or without REDIS_URL, is refused at
// start naming it and exits non-zero before serving; a clean stop gives the lease back at once, a
// crash after a term; a holder whose lease another node took exits. The lease's own cases, with a
// short term: test/store/writer-lease.mongo.test.ts.
import { MongoClient, type Collection } from 'mongodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { LEASE_TERM_MS, type WriterDoc } from '../../store/mongo/writer-lease.js';
import { runMain, startMain, type NodeProcess } from '../support/process.js';
import { unique } from '../support/temp.js';

const uri = inject('mongoUri');
const redisUrl = inject('redisUrl');

describe.skipIf(!uri)('one sole writer per MongoDB store', () => {
  let client: MongoClient;
  let db: string;
  let writers: Collection<WriterDoc>;
  const running: { child: NodeProcess['child']; exited: Promise<number | null> }[] = [];

  beforeAll(async () => {
    client = await MongoClient.connect(uri!);
  });
  afterAll(async () => {
    await client.close();
  });
  beforeEach(() => {
    db = unique('lease');
    writers = client.db(db).collection<WriterDoc>('writers');
  });
  afterEach(async () => {
    for (const n of running.splice(0)) {
      if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill('SIGKILL');
      await n.exited;
    }
    await client.db(db).dropDatabase();
  });

  const env = (node: string, extra: Record<string, string> = {}) => ({
    STORE: 'mongo',
    MONGODB_URI: uri!,
    MONGODB_DB: db,
    NODE_ID: node,
    ...extra,
  });
  async function serving(node: string, extra?: Record<string, string>): Promise<NodeProcess> {
    const n = await startMain(env(node, extra));
    running.push(n);
    return n;
  }
  /** Starts a node expected to be refused: its exit code and what it wrote. */
  async function refused(node: string, extra?: Record<string, string>): Promise<{ code: number | null; out: string }> {
    const run = runMain(env(node, extra));
    running.push(run);
    const code = await run.exited;
    return { code, out: run.output() };
  }
  const healthy = (n: NodeProcess) =>
    fetch(`${n.url}/healthz`).then(
      (r) => r.status,
      () => 'no answer',
    );

  it('refuses a second node without REDIS_URL, naming the holder, and it exits before serving', async () => {
    const a = await serving('lease-a');
    const b = await refused('lease-b');
    expect(b.code).toBe(1);
    expect(b.out).toMatch(
      /failed to start: MongoDB database lease_\w+ is in use by node lease-a, its sole writer \(started without REDIS_URL\)\. To run several nodes on one store, set REDIS_URL on every node; else stop lease-a first\./,
    );
    expect(b.out).not.toMatch(/"msg":"listening"/);
    expect(await healthy(a)).toBe(200);
    expect(await writers.findOne({ _id: 'sole' })).toMatchObject({ node: 'lease-a' });
  });

  it('gives the lease back on a clean stop, so the next node serves at once', async () => {
    const a = await serving('lease-a');
    a.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(await writers.findOne({ _id: 'sole' })).toBeNull();
    const started = performance.now();
    const b = await serving('lease-b');
    expect(performance.now() - started).toBeLessThan(LEASE_TERM_MS);
    expect(b.output()).not.toMatch(/took the sole-writer lease/);
    expect(await writers.findOne({ _id: 'sole' })).toMatchObject({ node: 'lease-b' });
  });

  it('lets a node started after the holder crashed serve once the lease went unrenewed for a term', async () => {
    const a = await serving('lease-a');
    a.child.kill('SIGKILL');
    await a.exited;
    const started = performance.now();
    const b = await serving('lease-a'); // the same name: the old process might be alive, paused, so it waits too
    const ms = performance.now() - started;
    expect(ms).toBeGreaterThanOrEqual(LEASE_TERM_MS);
    expect(ms).toBeLessThan(LEASE_TERM_MS + 15_000);
    expect(b.output()).toMatch(/took the sole-writer lease of MongoDB database lease_\w+ from node lease-a, unrenewed/);
  }, 60_000);

  it('stops a holder whose lease another node took: it logs the error and exits', async () => {
    const a = await serving('lease-a');
    expect(await healthy(a)).toBe(200);
    // What a node that found the lease unrenewed for a term (this one paused) leaves in the store.
    await writers.updateOne({ _id: 'sole' }, { $set: { node: 'lease-b', tenure: 'taken', beat: 0 } });
    const code = await a.exited;
    expect(code).toBe(1);
    const line = a
      .output()
      .split('\n')
      .find((l) => l.includes('lost the sole-writer lease'));
    expect(JSON.parse(line!)).toMatchObject({ level: 50, msg: expect.stringMatching(/node lease-b holds it now/) });
    expect(await healthy(a)).toBe('no answer');
    expect(await writers.findOne({ _id: 'sole' })).toMatchObject({ node: 'lease-b', tenure: 'taken' });
  });

  describe.skipIf(!redisUrl)('beside nodes with REDIS_URL', () => {
    it('refuses a node with REDIS_URL while a sole writer is alive', async () => {
      const a = await serving('lease-a');
      const r = await refused('lease-r', { REDIS_URL: redisUrl! });
      expect(r.code).toBe(1);
      expect(r.out).toMatch(
        /failed to start: MongoDB database lease_\w+ is in use by node lease-a, its sole writer \(started without REDIS_URL\)\. This node has REDIS_URL: set REDIS_URL on lease-a too/,
      );
      expect(r.out).not.toMatch(/"msg":"listening"/);
      expect(await healthy(a)).toBe(200);
      expect(await writers.countDocuments({ node: 'lease-r' })).toBe(0);
    });

    it('refuses a node without REDIS_URL while a node with it is alive, and lets nodes with it share', async () => {
      const r = await serving('lease-r', { REDIS_URL: redisUrl! });
      const s = await serving('lease-s', { REDIS_URL: redisUrl! });
      const a = await refused('lease-a');
      expect(a.code).toBe(1);
      expect(a.out).toMatch(
        /failed to start: MongoDB database lease_\w+ is in use by node lease-[rs], started with REDIS_URL/,
      );
      expect(a.out).not.toMatch(/"msg":"listening"/);
      expect(await writers.findOne({ _id: 'sole' })).toBeNull();
      expect(await Promise.all([healthy(r), healthy(s)])).toEqual([200, 200]);

      // Stopped cleanly, they leave nothing: a node without REDIS_URL then serves at once.
      for (const n of [r, s]) n.child.kill('SIGTERM');
      expect(await Promise.all([r.exited, s.exited])).toEqual([0, 0]);
      expect(await writers.countDocuments({})).toBe(0);
      const started = performance.now();
      await serving('lease-a');
      expect(performance.now() - started).toBeLessThan(LEASE_TERM_MS);
    });
  });
});
