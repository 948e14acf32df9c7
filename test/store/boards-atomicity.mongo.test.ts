// A board commit on the MongoDB wire server is atomic without transactions: a committer killed
// (SIGKILL) or whose write fails at any step leaves a board that reloads either whole as it was or
// whole as committed, and the next commit, by another process, finishes what was left. The
// commit's events (the board's outbox) travel in the same intent, so they are read whole too.
import { spawn } from 'node:child_process';
import { FindCursor, MongoClient } from 'mongodb';
import { afterEach, beforeEach, describe, expect, inject, it, onTestFinished } from 'vitest';
import { openMongoStore } from '../../store/mongo/index.js';
import { newBoardRecord, type BoardRecord, type Store, type StoredItem } from '../../store/ports/store.js';
import { entryArgs } from '../support/built.js';
import { dropPrefixed } from '../support/mongo-prefixed.js';
import { unique } from '../support/temp.js';
import { until } from '../support/until.js';

const uri = inject('mongoUri');
const DB = 'board_test';

type Work = StoredItem & { title: string };
const work = (n: number, title: string): Work => ({ workId: `W-${n}`, title });
const range = (from: number, to: number, title: string) =>
  Array.from({ length: to - from + 1 }, (_, i) => work(from + i, title));

/** The board before the commit, and two commits over it: one staged (past 500 items, inserted in two parts), one inline. */
const OLD = range(1, 1200, 'old');
const events = (boardId: string, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    _id: `${boardId}:${from + i}`,
    boardId,
    seq: from + i,
    type: 'item.created',
    actor: 'agent:a',
    workId: null,
    at: from + i,
    data: {},
  }));
const STAGED = {
  set: { lastSeq: 601 },
  events: 600,
  put: range(601, 2400, 'new'),
  removed: range(1, 100, '').map((i) => i.workId),
};
const INLINE = { set: { lastSeq: 3 }, events: 2, put: range(1, 5, 'new'), removed: ['W-6'] };

function after(change: typeof STAGED): Map<string, string> {
  const board = new Map(OLD.map((i) => [i.workId, i.title]));
  for (const workId of change.removed) board.delete(workId);
  for (const item of change.put) board.set(item.workId, item.title);
  return board;
}

function runChild(
  prefix: string,
  boardId: string,
  step: string,
  mode: string,
  change: typeof STAGED,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  const child = spawn(
    process.execPath,
    [...entryArgs('test/support/board-commit-child.ts'), uri!, DB, prefix, boardId, '2', step, mode],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  child.stdin.end(JSON.stringify({ ...change, set: { ...change.set, outbox: events(boardId, 2, change.events) } }));
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, out })));
}

describe.skipIf(!uri)('board commits on the MongoDB wire server, under faults', () => {
  let prefix: string;
  const opened: Store[] = [];
  const open = async () => {
    const store = await openMongoStore({ uri: uri!, db: DB, prefix });
    opened.push(store);
    return store;
  };
  const titles = async (store: Store, boardId: string) => {
    const board = (await store.boards.load(boardId))!;
    return { version: board.record.version, items: new Map(board.items.map((i) => [i.workId, (i as Work).title])) };
  };
  const logged = async (boardId: string, v: number) => {
    const client = await MongoClient.connect(uri!);
    try {
      return await client.db(DB).collection(`${prefix}boardItems`).countDocuments({ boardId, v });
    } finally {
      await client.close();
    }
  };

  /** A new board at version 1, its next work id `nextWorkSeq`. */
  const newBoard = async (store: Store, nextWorkSeq: number) => {
    const boardId = unique('board');
    await store.boards.insert({
      _id: boardId,
      version: 1,
      nextWorkSeq,
      nextFencingToken: 1,
      lastSeq: 0,
      nextDeadline: null,
    });
    return boardId;
  };
  /** The driver's collection of `store`'s item log (store/mongo/item-log.ts), to hold or count its inserts. */
  const itemLogOf = (store: Store) =>
    (store.boards as unknown as { items: { log: { insertMany: (docs: unknown[], o?: unknown) => Promise<unknown> } } })
      .items.log;
  /**
   * From here `store`'s item inserts hang, as a committer's would that died after its commit
   * point, until the test ends (then they fail). Counts the inserts begun.
   */
  const holdInserts = (store: Store): { held: () => number } => {
    const log = itemLogOf(store);
    const insertMany = log.insertMany.bind(log);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held = 0;
    log.insertMany = async () => {
      held++;
      await released;
      throw new Error('the committer died');
    };
    onTestFinished(() => {
      log.insertMany = insertMany;
      release();
    });
    return { held: () => held };
  };

  beforeEach(() => {
    prefix = `${unique('atom')}_`;
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close().catch(() => undefined);
    const client = await MongoClient.connect(uri!);
    const db = client.db(DB);
    await dropPrefixed(db, prefix);
    await client.close();
  });

  // Each case starts a committer process and moves 3,000 item versions on the shared wire server,
  // beside the other suites: it gets more than the default 30 s on a busy machine.
  const cases: [string, 'kill' | 'fail', typeof STAGED, 'old' | 'new'][] = [
    ['header', 'kill', STAGED, 'old'],
    ['header', 'fail', STAGED, 'old'],
    ['after-header', 'kill', STAGED, 'new'],
    ['after-header', 'fail', STAGED, 'new'],
    ['after-some-items', 'kill', STAGED, 'new'],
    ['after-some-items', 'fail', STAGED, 'new'],
    ['after-items', 'kill', STAGED, 'new'],
    ['header', 'kill', INLINE, 'old'],
    ['after-header', 'kill', INLINE, 'new'],
    ['after-header', 'fail', INLINE, 'new'],
  ];
  for (const [step, mode, change, shows] of cases) {
    const kind = change === STAGED ? 'a staged commit' : 'an inline commit';
    it(
      `${kind}, ${mode === 'kill' ? 'killed' : 'failing'} at ${step}: a reload shows the whole ${shows} board, and the next commit finishes the job`,
      { timeout: 90_000 },
      async () => {
        const boardId = unique('board');
        const store = await open();
        const header: BoardRecord = { ...newBoardRecord(boardId), nextWorkSeq: 1201 };
        await store.boards.insert(header);
        expect(
          await store.boards.commit(
            boardId,
            1,
            { lastSeq: 1, outbox: events(boardId, 1, 1) },
            { put: OLD, removed: [] },
          ),
        ).toBe(true);
        await (store.boards as typeof store.boards & { settled(): Promise<void> }).settled();

        const run = await runChild(prefix, boardId, step, mode, change);
        if (mode === 'kill') expect(run.signal, run.out).toBe('SIGKILL');
        else expect(run.code, run.out).toBe(0);

        // Another process reads the board: all of one commit or all of the other, never a mix.
        const expected = shows === 'old' ? new Map(OLD.map((i) => [i.workId, i.title])) : after(change);
        const reader = await open();
        const seen = await titles(reader, boardId);
        expect(seen.version).toBe(shows === 'old' ? 2 : 3);
        expect(seen.items).toEqual(expected);
        // The outbox is the events of the commit that made the version read, whole.
        const outbox = shows === 'old' ? events(boardId, 1, 1) : events(boardId, 2, change.events);
        expect((await reader.boards.load(boardId))!.record.outbox).toEqual(outbox);
        expect((await reader.boards.select({ _id: boardId }, ['outbox', 'lastSeq']))[0]).toEqual({
          _id: boardId,
          outbox,
          lastSeq: shows === 'old' ? 1 : change.set.lastSeq,
        });

        // The next commit, from yet another process, lands (once a dead committer's guard is stale) and finishes the job.
        const next = await open();
        await until(
          async () =>
            next.boards.commit(
              boardId,
              seen.version,
              { lastSeq: seen.version },
              { put: [work(9999, 'next')], removed: [] },
            ),
          15_000,
        );
        await (next.boards as typeof next.boards & { settled(): Promise<void> }).settled();
        expect(await logged(boardId, 3)).toBe(shows === 'old' ? 1 : change.put.length + change.removed.length);
        const last = await titles(await open(), boardId);
        expect(last.version).toBe(seen.version + 1);
        expect(last.items).toEqual(new Map([...expected, ['W-9999', 'next']]));
      },
    );
  }

  it('carries commits whose item inserts have not landed in the next intent: a reader sees them whole, and another committer puts them in the log', async () => {
    const store = await open();
    const boardId = await newBoard(store, 11);
    expect(await store.boards.commit(boardId, 1, { lastSeq: 1 }, { put: range(1, 10, 'v2'), removed: [] })).toBe(true);
    await (store.boards as typeof store.boards & { settled(): Promise<void> }).settled();
    const { held } = holdInserts(store);
    expect(await store.boards.commit(boardId, 2, { lastSeq: 2 }, { put: [work(1, 'v3')], removed: ['W-2'] })).toBe(
      true,
    );
    expect(await store.boards.commit(boardId, 3, { lastSeq: 3 }, { put: [work(3, 'v4')], removed: [] })).toBe(true);
    expect(await store.boards.commit(boardId, 4, { lastSeq: 4 }, { put: [work(1, 'v5')], removed: [] })).toBe(true);
    // Each commit returned while the inserts before it were held: they are carried, not awaited.
    await until(() => held() > 0, { what: 'the three commits’ inserts under way (held)' });
    expect(await logged(boardId, 3)).toBe(0);
    expect(await logged(boardId, 4)).toBe(0);

    const expected = new Map(range(1, 10, 'v2').map((i) => [i.workId, i.title]));
    expected.set('W-1', 'v5').set('W-3', 'v4').delete('W-2');
    const reader = await open();
    const seen = await titles(reader, boardId);
    expect(seen.version).toBe(5);
    expect(seen.items).toEqual(expected);
    const since = await reader.boards.changesSince(boardId, 2);
    expect(since!.items.map((i) => [(i as Work).workId, (i as Work).title]).sort()).toEqual([
      ['W-1', 'v5'],
      ['W-3', 'v4'],
    ]);
    expect(since!.removed).toEqual(['W-2']);

    const next = await open();
    expect(await next.boards.commit(boardId, 5, { lastSeq: 5 }, { put: [work(4, 'v6')], removed: [] })).toBe(true);
    await (next.boards as typeof next.boards & { settled(): Promise<void> }).settled();
    expect([await logged(boardId, 3), await logged(boardId, 4), await logged(boardId, 5)]).toEqual([2, 1, 1]);
    // Read back from the log alone (no intent carries them any more): the same board.
    expect((await titles(await open(), boardId)).items).toEqual(new Map([...expected, ['W-4', 'v6']]));
  });

  it('keeps a commit whose inserts have not landed readable after a plain update moved the version past it', async () => {
    const store = await open();
    const boardId = await newBoard(store, 3);
    holdInserts(store);
    expect(
      await store.boards.commit(boardId, 1, { lastSeq: 1 }, { put: [work(1, 'v2'), work(2, 'v2')], removed: [] }),
    ).toBe(true);
    // A plain update writes no items and leaves the commit's intent where it was.
    expect((await store.boards.update(boardId, 2, { nextDeadline: 60 }))!.version).toBe(3);
    expect(await logged(boardId, 2)).toBe(0);

    const reader = await open();
    expect(await titles(reader, boardId)).toEqual({
      version: 3,
      items: new Map([
        ['W-1', 'v2'],
        ['W-2', 'v2'],
      ]),
    });
    expect((await reader.boards.changesSince(boardId, 1))!.items.map((i) => i.workId).sort()).toEqual(['W-1', 'W-2']);
    // Another committer over the updated header puts the held commit's versions in the log.
    expect(await reader.boards.commit(boardId, 3, { lastSeq: 2 }, { put: [work(1, 'v4')], removed: [] })).toBe(true);
    await (reader.boards as typeof reader.boards & { settled(): Promise<void> }).settled();
    expect(await logged(boardId, 2)).toBe(2);
    expect((await titles(await open(), boardId)).items).toEqual(
      new Map([
        ['W-1', 'v4'],
        ['W-2', 'v2'],
      ]),
    );
  });

  it('inserts the item versions of consecutive commits together, carried until then, and at once when a batch is full', async () => {
    const store = await open();
    const boardId = await newBoard(store, 21);
    const boards = store.boards as typeof store.boards & { settled(): Promise<void> };
    const log = itemLogOf(store);
    const insertMany = log.insertMany.bind(log);
    const inserts: number[] = [];
    log.insertMany = (docs, o) => (inserts.push(docs.length), insertMany(docs, o));
    onTestFinished(() => void (log.insertMany = insertMany));
    for (let v = 1; v <= 4; v++)
      expect(await boards.commit(boardId, v, { lastSeq: v }, { put: [work(v, `v${v + 1}`)], removed: [] })).toBe(true);
    await boards.settled();
    // Each commit's version once, in fewer inserts than commits unless each commit took longer than the batch's delay.
    expect(inserts.reduce((a, b) => a + b, 0)).toBe(4);
    expect((await titles(await open(), boardId)).items.size).toBe(4);
    inserts.length = 0;
    expect(await boards.commit(boardId, 5, { lastSeq: 5 }, { put: range(1, 10, 'v6'), removed: [] })).toBe(true);
    // A full batch goes two turns after its commit (after the turn's replies), not after the delay.
    for (let turn = 0; turn < 3; turn++) await new Promise((r) => setImmediate(r));
    expect(inserts).toEqual([10]);
  });

  it('reads a board whose commits land between its header and its items in one try, as of the header, its staged parts included: a busy board is always readable', async () => {
    const boardId = unique('board');
    const writer = await open();
    const reader = await open();
    await writer.boards.insert({ ...newBoardRecord(boardId), nextWorkSeq: 201 });
    expect(await writer.boards.commit(boardId, 1, { lastSeq: 1 }, { put: range(1, 200, 'v2'), removed: [] })).toBe(
      true,
    );
    await (writer.boards as typeof writer.boards & { settled(): Promise<void> }).settled();
    expect((await reader.boards.load(boardId))!.record.version).toBe(2);

    // Every read of the item log waits until another commit (every item changed, one removed: staged,
    // past 128 entries, so the parts of the intent the reader took are replaced under it) landed.
    let version = 2;
    const racing = async () => {
      const landed = await writer.boards.commit(
        boardId,
        version,
        { lastSeq: version },
        { put: range(1, 199, `v${version + 1}`), removed: version === 2 ? ['W-200'] : [] },
      );
      expect(landed).toBe(true);
      version++;
      await (writer.boards as typeof writer.boards & { settled(): Promise<void> }).settled();
    };
    const toArray = FindCursor.prototype.toArray;
    const read = async <T>(run: () => Promise<T>): Promise<T> => {
      let raced = 0;
      FindCursor.prototype.toArray = async function (this: FindCursor) {
        if (this.namespace.collection === `${prefix}boardItems`) {
          raced++;
          await racing();
        }
        return toArray.call(this);
      } as typeof toArray;
      try {
        const result = await run();
        expect(raced).toBe(1); // one try
        return result;
      } finally {
        FindCursor.prototype.toArray = toArray;
      }
    };

    await racing(); // version 3: the reader, at 2, has changes to read
    const changes = await read(() => reader.boards.changesSince(boardId, 2));
    expect(changes!.record.version).toBe(3);
    expect(changes!.items.map((i) => (i as Work).title)).toEqual(Array(199).fill('v3'));
    expect(changes!.removed).toEqual(['W-200']);
    const whole = await read(() => reader.boards.load(boardId));
    expect(whole!.record.version).toBe(4);
    expect(new Set(whole!.items.map((i) => (i as Work).title))).toEqual(new Set(['v4']));
    expect(whole!.items).toHaveLength(199);
  });

  it('moves a board kept whole in its header by an earlier version to the new layout on first load, losing nothing', async () => {
    const boardId = unique('board');
    const store = await open();
    const client = await MongoClient.connect(uri!);
    try {
      const items = Object.fromEntries(range(1, 30, 'kept').map((i) => [i.workId, i]));
      await client
        .db(DB)
        .collection(`${prefix}boards`)
        .insertOne({
          _id: boardId,
          version: 7,
          nextWorkSeq: 31,
          nextFencingToken: 4,
          lastSeq: 12,
          nextDeadline: null,
          items,
        } as never);
      const seen = await titles(store, boardId);
      expect(seen).toEqual({ version: 7, items: new Map(range(1, 30, 'kept').map((i) => [i.workId, i.title])) });
      const raw = await client
        .db(DB)
        .collection(`${prefix}boards`)
        .findOne({ _id: boardId } as never);
      expect(raw).not.toHaveProperty('items');
      expect(await store.boards.get(boardId)).toEqual({
        _id: boardId,
        version: 7,
        nextWorkSeq: 31,
        nextFencingToken: 4,
        lastSeq: 12,
        nextDeadline: null,
      });
      expect(
        await store.boards.commit(boardId, 7, { lastSeq: 13 }, { put: [work(2, 'changed')], removed: ['W-3'] }),
      ).toBe(true);
      const later = await titles(await open(), boardId);
      expect(later.items.size).toBe(29);
      expect(later.items.get('W-2')).toBe('changed');
    } finally {
      await client.close();
    }
  });
});
