import { newBoardRecord } from '../../store/ports/store.js';
// The board actor on a real embedded store: commands waiting together share one commit, each
// caller gets its own reply or refusal, and a listener that throws never undoes a reply.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BoardActor, BoardBusyError, MAILBOX_LIMIT, QUIET_MS, newestOf } from '../../actors/board-actor.js';
import { toAppError } from '../../src/board/board-access.js';
import { createItems } from '../../machines/board-commands.js';
import { claim, submit } from '../../machines/lease-commands.js';
import type { NewItem } from '../../machines/board-commands.js';
import type { Decide } from '../../machines/board-decision.js';
import { StoreUnavailableError, type Store } from '../../store/ports/store.js';
import { embeddedStore, type OpenedStore } from '../support/stores.js';
import { failOnce, loseAnswerOnce } from '../support/fail-once.js';
import { quietFor, until } from '../support/until.js';

const claimAs = (n: number) =>
  claim({ principal: `agent:${n}`, workId: null, purpose: 'work', ttlMs: 60_000, leaseId: `L${n}` });

const item = (title: string): NewItem => ({
  title,
  description: '',
  type: 'task',
  priority: 2,
  parentId: null,
  dependsOn: [],
  verify: 'none',
  maxAttempts: 3,
  criteria: [],
  doctrine: [],
  spec: [],
  labels: [],
});

describe('board actor', () => {
  let opened: OpenedStore;
  let store: Store;
  let commits = 0;
  const itemsOf = async (id: string) =>
    new Map(((await store.boards.load(id))?.items ?? []).map((i) => [i.workId, i as unknown as { state: string }]));
  beforeEach(async () => {
    opened = await embeddedStore();
    store = opened.store;
    await store.boards.insert(newBoardRecord('b'));
    const commit = store.boards.commit.bind(store.boards);
    commits = 0;
    store.boards.commit = (...args) => (commits++, commit(...args));
  });
  afterEach(async () => {
    await store.close();
    await opened.drop();
  });

  it('reads the board again after a commit that failed, as it may have landed all the same', async () => {
    const actor = new BoardActor('b', store, Date.now);
    await actor.ask(createItems([item('one')], 'user:a'));
    loseAnswerOnce(store.boards, 'commit'); // the write lands, its answer is lost
    await expect(actor.ask(claimAs(1))).rejects.toBeInstanceOf(StoreUnavailableError);
    expect((await itemsOf('b')).get('W-1')?.state).toBe('claimed');
    expect((await actor.read()).record.version).toBe((await store.boards.load('b'))!.record.version);
    // The claim the agent was told failed holds in the store: its holder's submit is decided on it.
    await expect(actor.ask(submit({ principal: 'agent:1', leaseId: 'L1', head: 'abcdef1' }))).resolves.toBeDefined();
    expect((await itemsOf('b')).get('W-1')?.state).not.toBe('claimed');
  });

  for (const logsInCommit of [true, false])
    it(`tells its listeners of a commit whose answer was lost once a read finds it landed, with no other command (${logsInCommit ? 'the log written in the commit' : 'the outbox copied after it'})`, async () => {
      Object.defineProperty(store.boards, 'logsInCommit', { value: logsInCommit });
      const actor = new BoardActor('b', store, Date.now);
      const told: string[] = [];
      actor.subscribe((events) => told.push(...events.map((e) => `${e.seq} ${e.type}`)));
      await actor.ask(createItems([item('one')], 'user:a'));
      await until(() => told.length > 0, { what: 'the item’s events told' });
      const before = told.length;
      loseAnswerOnce(store.boards, 'commit'); // the write lands, its answer is lost
      await expect(actor.ask(claimAs(1))).rejects.toBeInstanceOf(StoreUnavailableError);
      await until(() => told.length > before, { what: 'the landed claim’s events told' });
      expect(told.slice(before).some((t) => t.endsWith(' lease.granted'))).toBe(true);
      const logged = await store.events.select({ boardId: 'b' }, ['seq'], { sort: [['seq', 1]] });
      expect(told.map((t) => Number(t.split(' ')[0]))).toEqual(logged.map((e) => e.seq));
    });

  it('tells nothing of a commit whose write did not land', async () => {
    const actor = new BoardActor('b', store, Date.now);
    const told: number[] = [];
    actor.subscribe((events) => told.push(...events.map((e) => e.seq)));
    await actor.ask(createItems([item('one')], 'user:a'));
    await until(() => told.length > 0, { what: 'the item’s events told' });
    const before = [...told];
    failOnce(store.boards, 'commit');
    await expect(actor.ask(claimAs(1))).rejects.toBeInstanceOf(StoreUnavailableError);
    await quietFor(200);
    expect(told).toEqual(before);
    expect((await actor.read()).record.lastSeq).toBe(before.at(-1));
  });

  it('decides what waits in the mailbox into one commit, answering each caller apart', async () => {
    const actor = new BoardActor('b', store, Date.now);
    await actor.ask(createItems([item('one'), item('two')], 'user:a'));
    const before = commits;
    const asks = [
      actor.ask(claim({ principal: 'agent:1', workId: null, purpose: 'work', ttlMs: 60_000, leaseId: 'L1' })),
      actor.ask(claim({ principal: 'agent:2', workId: null, purpose: 'work', ttlMs: 60_000, leaseId: 'L2' })),
      actor.ask(claim({ principal: 'agent:3', workId: null, purpose: 'work', ttlMs: 60_000, leaseId: 'L3' })),
      actor.ask(submit({ principal: 'agent:1', leaseId: 'L1', head: 'abcdef1' })),
    ];
    const results = await Promise.allSettled(asks);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason.code).toBe('NOTHING_READY');
    expect([
      (results[0] as PromiseFulfilledResult<{ workId: string }>).value.workId,
      (results[1] as PromiseFulfilledResult<{ workId: string }>).value.workId,
    ]).toEqual(['W-1', 'W-2']);
    // Everything waiting behind the first claim went out together: at most two commits for four commands.
    expect(commits - before).toBeLessThanOrEqual(2);
    const stored = await itemsOf('b');
    expect(stored.get('W-1')!.state).toBe('done');
    expect(stored.get('W-2')!.state).toBe('claimed');
    await actor.syncLog();
    const seqs = (await store.events.select({ boardId: 'b' }, ['seq'], { sort: [['seq', 1]] })).map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it('hands a decision that names its events the seqs they were committed at, each caller of one commit its own', async () => {
    const actor = new BoardActor('b', store, Date.now);
    await actor.ask(createItems([item('one')], 'user:a'));
    const logs =
      (n: number): Decide<number[]> =>
      (board) => ({
        board,
        events: Array.from({ length: n }, () => ({ type: 'test.noted', actor: 'user:a', workId: null, data: {} })),
        reply: [],
        numbered: (seqs) => [...seqs],
      });
    const before = commits;
    const replies = await Promise.all([actor.ask(logs(2)), actor.ask(logs(1)), actor.ask(logs(3))]);
    expect(commits - before).toBeLessThanOrEqual(2);
    const lastSeq = (await store.boards.load('b'))!.record.lastSeq;
    expect(replies.flat()).toEqual([lastSeq - 5, lastSeq - 4, lastSeq - 3, lastSeq - 2, lastSeq - 1, lastSeq]);
    const logged = await store.events.find({ boardId: 'b', type: 'test.noted' });
    expect(logged.map((e) => e.seq).sort((a, b) => a - b)).toEqual(replies.flat());
  });

  it('holds each commit’s counts per state as its board’s index has them, unchanged by the commits after it', async () => {
    const actor = new BoardActor('b', store, Date.now);
    await actor.ask(createItems([item('one'), item('two')], 'user:a'));
    const first = actor.held!;
    expect(first.record.counts).toBe(first.board.index.counts); // no copy of its own
    await actor.ask(claimAs(1));
    await actor.ask(submit({ principal: 'agent:1', leaseId: 'L1', head: 'abcdef1' }));
    expect(first.record.counts).toMatchObject({ ready: 2, claimed: 0, done: 0 });
    expect(actor.held!.record.counts).toMatchObject({ ready: 1, claimed: 0, done: 1 });
    expect((await store.boards.get('b'))!.counts).toEqual(actor.held!.record.counts);
  });

  it('loses no event from the log when the copy of one commit fails and the next commit lands before anyone reads the log again', async () => {
    const actor = new BoardActor('b', store, Date.now);
    await actor.ask(createItems([item('one'), item('two')], 'user:a'));
    failOnce(store.events, 'insertMissing');
    await actor.ask(claim({ principal: 'agent:1', workId: null, purpose: 'work', ttlMs: 60_000, leaseId: 'L1' }));
    // The claim's events are committed but not in the log; the next commit carries them in its outbox.
    await actor.ask(claim({ principal: 'agent:2', workId: null, purpose: 'work', ttlMs: 60_000, leaseId: 'L2' }));
    // Another node (a new actor) reads the header and copies its outbox: the log is whole.
    await new BoardActor('b', store, Date.now).syncLog();
    const logged = await store.events.select({ boardId: 'b' }, ['seq', 'type'], { sort: [['seq', 1]] });
    const { record } = (await store.boards.load('b'))!;
    expect(logged.map((e) => e.seq)).toEqual(Array.from({ length: record.lastSeq }, (_, i) => i + 1));
    expect(logged.filter((e) => e.type === 'lease.granted')).toHaveLength(2);
  });

  it('copies the outboxes of commits that land while a copy is on its way in one insert, telling listeners in order', async () => {
    // A store that does not write the log in its commit (MongoDB): the actor copies each outbox.
    Object.defineProperty(store.boards, 'logsInCommit', { value: false });
    const actor = new BoardActor('b', store, Date.now);
    const told: number[] = [];
    actor.subscribe((events) => told.push(...events.map((e) => e.seq)));
    await actor.ask(createItems([item('one'), item('two'), item('three'), item('four')], 'user:a'));
    await until(() => told.length === 4, { what: 'the items’ events copied and told' });
    told.length = 0;
    const insert = store.events.insertMissing.bind(store.events);
    const inserts: number[][] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    store.events.insertMissing = async (docs) => {
      inserts.push(docs.map((d) => d.seq));
      if (inserts.length === 1) await held;
      return insert(docs);
    };
    // Each claim is answered once committed; the first one's copy is held, the next three wait behind it.
    await actor.ask(claimAs(1));
    await until(() => inserts.length === 1, { what: 'the first copy under way' });
    for (let n = 2; n <= 4; n++) await actor.ask(claimAs(n));
    expect(told).toEqual([]);
    release();
    const { record } = (await store.boards.load('b'))!;
    await until(() => told.length === 8, { what: 'the listeners told of all four claims' });
    // The first claim's events, then the other three claims' together; listeners in commit order.
    expect(inserts).toEqual([
      [5, 6],
      [7, 8, 9, 10, 11, 12],
    ]);
    expect(told).toEqual([5, 6, 7, 8, 9, 10, 11, 12]);
    expect(record.lastSeq).toBe(12);
    const seqs = (await store.events.select({ boardId: 'b' }, ['seq'], { sort: [['seq', 1]] })).map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: record.lastSeq }, (_, i) => i + 1));
  });

  it('keeps the stored outbox to the commits whose copy to the log is not yet known to have landed', async () => {
    const actor = new BoardActor('b', store, Date.now);
    await actor.ask(
      createItems(
        Array.from({ length: 40 }, (_, i) => item(`t${i}`)),
        'user:a',
      ),
    );
    for (let i = 1; i <= 40; i++)
      await actor.ask(
        claim({ principal: `agent:${i}`, workId: null, purpose: 'work', ttlMs: 60_000, leaseId: `L${i}` }),
      );
    const [header] = await store.boards.select({ _id: 'b' }, ['outbox', 'lastSeq']);
    // Each claim's commit may carry the one before it (its copy runs after the reply), never the whole history.
    expect(header!.outbox!.length).toBeLessThanOrEqual(4);
    expect(header!.outbox!.at(-1)!.seq).toBe(header!.lastSeq);
    await actor.syncLog();
    expect(await store.events.count({ boardId: 'b' })).toBe(header!.lastSeq);
  });

  it('answers a read that finds the store ahead with its own commit once that lands, reading nothing back', async () => {
    const actor = new BoardActor('b', store, Date.now);
    await actor.ask(createItems([item('one')], 'user:a'));
    let reads = 0;
    for (const name of ['load', 'changesSince'] as const) {
      const read = store.boards[name].bind(store.boards) as (...args: unknown[]) => Promise<unknown>;
      (store.boards as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => (reads++, read(...args));
    }
    // The commit lands in the store, and its answer is held back while a read comes in.
    const commit = store.boards.commit.bind(store.boards);
    let landed!: () => void;
    const answered = new Promise<void>((resolve) => (landed = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    store.boards.commit = async (...args) => {
      const ok = await commit(...args);
      landed();
      await held;
      return ok;
    };
    const claimed = actor.ask(
      claim({ principal: 'agent:1', workId: null, purpose: 'work', ttlMs: 60_000, leaseId: 'L1' }),
    );
    await answered;
    // Commands asked meanwhile wait behind the commit under way (the metrics' mailbox depth).
    expect(actor.waiting).toBe(0);
    const later = [actor.ask(createItems([item('two')], 'user:a')), actor.ask(createItems([item('three')], 'user:a'))];
    expect(actor.waiting).toBe(2);
    const read = actor.read();
    release();
    const [{ board, record }] = await Promise.all([read, claimed]);
    expect(record.version).toBe(3);
    expect(board.items.get('W-1')!.state).toBe('claimed');
    expect(reads).toBe(0);
    await Promise.all(later);
    expect(actor.waiting).toBe(0);
  });

  it('tells of the board as a quiet spell left it when a commit ends ten quiet minutes, and only then', async () => {
    let now = Date.UTC(2026, 10, 22, 12);
    const quiet: { lastSeq: number; titles: string[] }[] = [];
    const actor = new BoardActor(
      'b',
      store,
      () => now,
      undefined,
      (before) =>
        quiet.push({ lastSeq: before.record.lastSeq, titles: [...before.board.items.values()].map((i) => i.title) }),
    );
    await actor.ask(createItems([item('one')], 'user:a'));
    now += QUIET_MS - 1;
    await actor.ask(createItems([item('two')], 'user:a'));
    expect(quiet).toEqual([]);
    now += QUIET_MS;
    await actor.ask(createItems([item('three')], 'user:a'));
    expect(quiet).toEqual([{ lastSeq: 2, titles: ['one', 'two'] }]);
    now += QUIET_MS;
    await expect(
      actor.ask(claim({ principal: 'agent:1', workId: 'W-9', purpose: 'work', ttlMs: 60_000, leaseId: 'L9' })),
    ).rejects.toMatchObject({ code: 'ITEM_NOT_FOUND' });
    expect(quiet).toHaveLength(1); // a refused command commits nothing, so it ends no spell
  });

  it('holds no outbox beside a header whose events the commit logged, only its newest, nor the keys a commit changed', async () => {
    let now = Date.UTC(2026, 10, 22, 12);
    const quiet: number[] = [];
    /** An actor of board b, telling `quiet` the last seq before each quiet spell it ends. */
    const quietActor = () =>
      new BoardActor(
        'b',
        store,
        () => now,
        undefined,
        (before) => quiet.push(before.record.lastSeq),
      );
    const actor = quietActor();
    await actor.ask(createItems([item('one'), item('two')], 'user:a'));
    expect(store.boards.logsInCommit).toBe(true);
    // The store keeps the newest event in the header; the actor holds only its seq and time.
    expect((await store.boards.load('b'))!.record.outbox).toHaveLength(1);
    expect(actor.held!.record.outbox).toBeUndefined();
    expect(actor.held!.record.lastSeq).toBe(2);
    expect(newestOf(actor.held!)).toEqual({ seq: 2, at: now });
    // Only the commit's write read which keys it changed; the held board still has both items.
    expect(actor.held!.board.changed.size).toBe(0);
    expect([...actor.held!.board.items.keys()]).toEqual(['W-1', 'W-2']);
    // A node that loads the board (no commit of its own yet) keeps the same, and finds the quiet spell from it.
    const loaded = quietActor();
    await loaded.read();
    expect(loaded.held!.record.outbox).toBeUndefined();
    expect(newestOf(loaded.held!)).toEqual({ seq: 2, at: now });
    now += QUIET_MS;
    await loaded.ask(createItems([item('three')], 'user:a'));
    expect(quiet).toEqual([2]);
    expect(newestOf(loaded.held!)).toEqual({ seq: 3, at: now });
  });

  it('refuses a command beyond a full mailbox at once, as 503 BOARD_BUSY with Retry-After, and decides the rest', async () => {
    const actor = new BoardActor('b', store, Date.now);
    const commit = store.boards.commit.bind(store.boards);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    store.boards.commit = async (...args) => (await held, commit(...args)); // the store is slow: commands pile up
    const asks = Array.from({ length: MAILBOX_LIMIT + 2 }, (_, i) =>
      actor.ask(createItems([item(`item ${i}`)], 'user:a')),
    );
    const refused = await asks.at(-1)!.then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(BoardBusyError);
    expect(toAppError(refused)).toMatchObject({ code: 'BOARD_BUSY', headers: { 'retry-after': '1' } });
    release();
    const settled = await Promise.allSettled(asks.slice(0, -1));
    expect(settled.filter((r) => r.status === 'fulfilled').length).toBe(MAILBOX_LIMIT + 1);
  });

  describe('pipelined: what comes in while a commit is on its way is decided on the board it leaves', () => {
    /** Each decision's name, in the order the actor made them. */
    let decided: string[];
    const named =
      <R>(name: string, decide: Decide<R>): Decide<R> =>
      (board, now) => (decided.push(name), decide(board, now));
    /**
     * Holds the actor's next commit before it reaches the store until the returned `start` is
     * called, then runs `then`: it may write through to the store (which calls `applied` once its
     * part is done, as the embedded store does), or call `applied` itself and do otherwise.
     */
    const holdNextCommit = (then: (commit: () => Promise<boolean>, applied: () => void) => Promise<boolean>) => {
      const commit = store.boards.commit.bind(store.boards);
      let start!: () => void;
      const started = new Promise<void>((r) => (start = r));
      let first = true;
      store.boards.commit = async (...args) => {
        if (!first) return commit(...args);
        first = false;
        await started;
        return then(() => commit(...args), args[5]?.applied ?? (() => undefined));
      };
      return start;
    };
    beforeEach(() => {
      decided = [];
    });

    it('writes it once that commit landed, answering nobody before their own commit is durable', async () => {
      const actor = new BoardActor('b', store, Date.now);
      await actor.ask(createItems([item('one'), item('two'), item('three')], 'user:a'));
      const before = commits;
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let landed = false;
      const start = holdNextCommit(async (commit) => {
        const ok = await commit(); // the embedded store tells the actor when its part of the write is done
        landed = true;
        await held; // durable, its answer held back
        return ok;
      });
      // The write after it lands too, its answer held back until told.
      const through = store.boards.commit;
      let calls = 0;
      let releaseSecond!: () => void;
      const heldSecond = new Promise<void>((r) => (releaseSecond = r));
      store.boards.commit = async (...args) => {
        const call = ++calls;
        const ok = await through(...args);
        if (call === 2) await heldSecond;
        return ok;
      };
      const settled: string[] = [];
      const ask = (n: number) => actor.ask(named(`${n}`, claimAs(n))).then((r) => (settled.push(`${n}`), r));
      const asks = [ask(1)];
      await until(() => decided.length === 1); // decided, and its commit held before the store
      asks.push(ask(2), ask(3));
      start();
      await until(() => landed && decided.length === 3);
      // The second and third claims were decided on the first's board before it was answered, and
      // their write started behind it (the embedded store applies writes in order).
      expect(decided).toEqual(['1', '2', '3']);
      expect(commits - before).toBe(2);
      await quietFor(20); // proves no caller is answered before its commit is released
      expect(settled).toEqual([]);
      release();
      await until(() => settled.length === 1);
      await quietFor(20); // proves the second and third are not answered with the first
      expect(settled).toEqual(['1']); // the second and third wait for their own commit
      releaseSecond();
      const grants = await Promise.all(asks);
      expect(grants.map((g) => g.workId)).toEqual(['W-1', 'W-2', 'W-3']);
      expect(grants.map((g) => g.fencingToken)).toEqual([1, 2, 3]);
      expect(commits - before).toBe(2);
      expect(decided).toEqual(['1', '2', '3']); // each decided once
      await actor.syncLog();
      const { record } = (await store.boards.load('b'))!;
      const seqs = (await store.events.select({ boardId: 'b' }, ['seq'], { sort: [['seq', 1]] })).map((e) => e.seq);
      expect(seqs).toEqual(Array.from({ length: record.lastSeq }, (_, i) => i + 1));
    });

    it('lets a read that finds the store at a version wait for the write of that version only, not for one queued behind it', async () => {
      const actor = new BoardActor('b', store, Date.now);
      await actor.ask(createItems([item('one'), item('two')], 'user:a'));
      const version = (await actor.read()).record.version;
      const through = store.boards.commit;
      let calls = 0;
      let storeFirst!: () => void;
      const firstMayStore = new Promise<void>((r) => (storeFirst = r));
      let answerFirst!: () => void;
      const firstAnswered = new Promise<void>((r) => (answerFirst = r));
      let storeSecond!: () => void;
      const secondStored = new Promise<void>((r) => (storeSecond = r));
      let firstInStore = false;
      store.boards.commit = async (...args) => {
        const call = ++calls;
        await (call === 1 ? firstMayStore : secondStored); // the second: queued behind the first, not in the store yet
        const ok = await through(...args);
        if (call === 1) {
          firstInStore = true;
          await firstAnswered; // in the store, the actor not told yet
        }
        return ok;
      };
      const first = actor.ask(claimAs(1));
      await until(() => calls === 1);
      const second = actor.ask(claimAs(2)); // waits in the mailbox: decided once the first write is applied
      storeFirst();
      // The second write starts once the first is applied, which can be before that one is synced.
      await until(() => calls === 2 && firstInStore);
      expect(await store.boards.versionOf('b')).toBe(version + 1);
      let read: number | null = null;
      const reading = Promise.resolve(actor.read()).then((c) => (read = c.record.version));
      await quietFor(20); // proves the read is not answered from the store's newer version
      expect(read).toBeNull(); // the store is ahead of what the actor holds: it waits for its own write
      answerFirst();
      await reading;
      expect(read).toBe(version + 1); // without waiting for the second, which is not even in the store
      storeSecond();
      expect((await Promise.all([first, second])).map((g) => g.workId)).toEqual(['W-1', 'W-2']);
      expect((await actor.read()).record.version).toBe(version + 2);
    });

    it("decides it again when that commit loses to another node: no lease granted twice, the other node's change kept", async () => {
      const actor = new BoardActor('b', store, Date.now);
      await actor.ask(createItems([item('one'), item('two'), item('three')], 'user:a'));
      let raced!: () => void;
      const otherCommitted = new Promise<void>((r) => (raced = r));
      let lost: boolean | null = null;
      const start = holdNextCommit(async (commit) => {
        await otherCommitted;
        lost = !(await commit());
        return !lost;
      });
      const asks = [actor.ask(named('1', claimAs(1)))];
      await until(() => decided.length === 1); // decided, and its commit held before the store
      asks.push(...[2, 3].map((n) => actor.ask(named(`${n}`, claimAs(n)))));
      start();
      // Another node (another actor on the same store) commits first.
      await new BoardActor('b', store, Date.now).ask(createItems([item('four')], 'user:b'));
      raced();
      const grants = await Promise.all(asks);
      expect(lost).toBe(true);
      expect(grants.map((g) => g.workId)).toEqual(['W-1', 'W-2', 'W-3']);
      expect(new Set(grants.map((g) => g.fencingToken)).size).toBe(3);
      // The second and third were decided on the first's board while it was on its way (and their
      // write, standing on it, wrote nothing); all three were decided again once it lost.
      expect(decided).toEqual(['1', '2', '3', '1', '2', '3']);
      const stored = await itemsOf('b');
      expect([...stored.entries()].map(([id, i]) => `${id}:${i.state}`)).toEqual([
        'W-1:claimed',
        'W-2:claimed',
        'W-3:claimed',
        'W-4:ready',
      ]);
      const granted = await store.events.select({ boardId: 'b', type: 'lease.granted' }, ['workId']);
      expect(granted.map((e) => e.workId).sort()).toEqual(['W-1', 'W-2', 'W-3']);
    });

    it('on a store that does not say when it is done with this process, answers the commit first and then decides what came in, on the board as it then stands', async () => {
      const actor = new BoardActor('b', store, Date.now);
      await actor.ask(createItems([item('one'), item('two'), item('three')], 'user:a'));
      // Such a store (MongoDB's adapter) calls no `applied` and does not apply queued writes in order.
      Object.defineProperty(store.boards, 'writesInOrder', { value: false });
      const start = holdNextCommit((commit) => commit());
      const commit = store.boards.commit;
      store.boards.commit = (id, v, set, items, log, options) =>
        commit(id, v, set, items, log, { ...options, applied: undefined });
      const order: string[] = [];
      let reads = 0;
      const changesSince = store.boards.changesSince.bind(store.boards);
      store.boards.changesSince = (...args) => (reads++, changesSince(...args));
      const claimed =
        (n: number): Decide<{ workId: string }> =>
        (board, now) => (order.push(`decided ${n}`), claimAs(n)(board, now));
      const ask = (n: number) => actor.ask(claimed(n)).then((r) => (order.push(`answered ${n}`), r));
      const asks = [ask(1)];
      await until(() => order.length === 1);
      asks.push(ask(2), ask(3));
      // Meanwhile the actor hears that another node committed: what comes next is decided on the board read again.
      actor.saw(Number.MAX_SAFE_INTEGER);
      start();
      const grants = await Promise.all(asks);
      expect(order).toEqual(['decided 1', 'answered 1', 'decided 2', 'decided 3', 'answered 2', 'answered 3']);
      expect(reads).toBe(1);
      expect(grants.map((g) => g.workId)).toEqual(['W-1', 'W-2', 'W-3']);
    });

    it('decides it again when that commit fails, which answers only its own callers with the failure', async () => {
      const actor = new BoardActor('b', store, Date.now);
      await actor.ask(createItems([item('one'), item('two')], 'user:a'));
      const start = holdNextCommit(async (_commit, applied) => {
        applied();
        await until(() => decided.length === 3); // the actor decides what waits meanwhile
        throw new Error('the disk is gone');
      });
      const asks = [actor.ask(named('1', claimAs(1)))];
      await until(() => decided.length === 1); // decided, and its commit held before the store
      asks.push(...[2, 3].map((n) => actor.ask(named(`${n}`, claimAs(n)))));
      start();
      const settled = await Promise.allSettled(asks);
      expect(settled[0]).toMatchObject({ status: 'rejected', reason: { message: 'the disk is gone' } });
      expect(settled.slice(1).map((r) => r.status === 'fulfilled' && r.value.workId)).toEqual(['W-1', 'W-2']);
      expect(decided).toEqual(['1', '2', '3', '2', '3']);
      const stored = await itemsOf('b');
      expect([...stored.values()].map((i) => i.state)).toEqual(['claimed', 'claimed']);
    });
  });

  it('answers a committed command even when a listener throws, and reports the listener', async () => {
    const reported: unknown[] = [];
    const actor = new BoardActor('b', store, Date.now, (e) => reported.push(e));
    actor.subscribe(() => {
      throw new Error('fan-out broke');
    });
    const created = await actor.ask(createItems([item('kept')], 'user:a'));
    expect(created.map((i) => i.workId)).toEqual(['W-1']);
    await actor.syncLog();
    await until(() => reported.length > 0);
    expect(reported.map((e) => (e as Error).message)).toEqual(['fan-out broke']);
    expect([...(await itemsOf('b')).keys()]).toEqual(['W-1']);
  });
});
