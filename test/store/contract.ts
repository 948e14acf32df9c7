// The store contract: every adapter must pass these, so callers see one behaviour.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DuplicateKeyError,
  eventId,
  modify,
  newBoardRecord,
  type AccountRecord,
  type EventRecord,
  type Store,
} from '../../store/ports/store.js';
import { unique } from '../support/temp.js';

export interface StoreHarness {
  open(): Promise<Store>;
  /** Closes and opens again on the same data. */
  reopen?(store: Store): Promise<Store>;
  cleanup(store: Store): Promise<void>;
}

const account = (over: Partial<AccountRecord> = {}): AccountRecord => ({
  _id: unique('acc'),
  version: 1,
  email: `${unique('u')}@example.com`,
  passwordHash: 'hash',
  displayName: null,
  defaultProjectId: null,
  emailVerified: false,
  referralCode: unique('ref'),
  referredBy: null,
  referralMonths: 0,
  createdAt: Date.now(),
  ...over,
});

const event = (boardId: string, seq: number): EventRecord => ({
  _id: eventId(boardId, seq),
  version: 1,
  boardId,
  seq,
  type: 'item.created',
  actor: 'user:x',
  workId: `W-${seq}`,
  at: 1000 + seq,
  data: { n: seq },
});

export function storeContract(name: string, harness: StoreHarness): void {
  describe(`store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await harness.open();
    });
    afterEach(async () => {
      await harness.cleanup(store);
    });

    it('inserts and reads back a copy of a document', async () => {
      const a = account();
      await store.accounts.insert(a);
      const got = await store.accounts.get(a._id);
      expect(got).toEqual(a);
      got!.email = 'mutated@example.com';
      expect((await store.accounts.get(a._id))!.email).toBe(a.email);
      expect(await store.accounts.get('missing')).toBeNull();
    });

    it('refuses a duplicate id and a duplicate unique key, changing nothing', async () => {
      const a = account();
      await store.accounts.insert(a);
      const sameId = await store.accounts.insert({ ...account(), _id: a._id }).catch((e: unknown) => e);
      expect(sameId).toBeInstanceOf(DuplicateKeyError);
      expect((sameId as DuplicateKeyError).index).toBe('_id');
      const dup = account({ email: a.email });
      const err = await store.accounts.insert(dup).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DuplicateKeyError);
      expect((err as DuplicateKeyError).index).toBe('email');
      expect(await store.accounts.get(dup._id)).toBeNull();
    });

    it('updates only at the expected version and bumps it', async () => {
      const a = account();
      await store.accounts.insert(a);
      const next = await store.accounts.update(a._id, 1, { displayName: 'Ada' });
      expect(next).toMatchObject({ displayName: 'Ada', version: 2, email: a.email });
      expect(await store.accounts.update(a._id, 1, { displayName: 'Stale' })).toBeNull();
      expect((await store.accounts.get(a._id))!.displayName).toBe('Ada');
      expect(await store.accounts.update('missing', 1, { displayName: 'x' })).toBeNull();
    });

    it('unsets fields on update', async () => {
      const a = account();
      await store.accounts.insert(a);
      const next = await store.accounts.update(a._id, 1, {}, ['displayName']);
      expect(next).not.toHaveProperty('displayName');
      expect(next!.version).toBe(2);
    });

    it('keeps unique keys on update: moving onto a taken key fails, a freed key can be reused', async () => {
      const a = account();
      const b = account();
      await store.accounts.insert(a);
      await store.accounts.insert(b);
      // FerretDB 2 answers this findAndModify unlike an insert (store/mongo/duplicate-key.ts).
      const err = await store.accounts.update(b._id, 1, { email: a.email }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DuplicateKeyError);
      expect((err as DuplicateKeyError).index).toBe('email');
      expect((await store.accounts.get(b._id))!.version).toBe(1);
      const moved = `${unique('moved')}@example.com`;
      await store.accounts.update(a._id, 1, { email: moved });
      await store.accounts.update(b._id, 1, { email: a.email });
      expect((await store.accounts.findOne({ email: a.email }))!._id).toBe(b._id);
    });

    it('lets exactly one of many concurrent compare-and-set updates win, round after round', async () => {
      const a = account();
      await store.accounts.insert(a);
      for (let version = 1; version <= 10; version++) {
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.accounts.update(a._id, version, { displayName: `v${version}n${i}` }),
          ),
        );
        const winners = results.filter((r) => r !== null);
        expect(winners).toHaveLength(1);
        const stored = (await store.accounts.get(a._id))!;
        expect(stored.version).toBe(version + 1);
        expect(stored.displayName).toBe(winners[0]!.displayName);
      }
    });

    it('finds with equality, $in, ranges, sort, skip and limit, and counts', async () => {
      const board = unique('board');
      for (let seq = 1; seq <= 10; seq++) await store.events.insert(event(board, seq));
      await store.events.insert(event(unique('other'), 1));
      expect(await store.events.count({ boardId: board })).toBe(10);
      const page = await store.events.find(
        { boardId: board, seq: { $gt: 3 } },
        { sort: [['seq', -1]], skip: 1, limit: 3 },
      );
      expect(page.map((e) => e.seq)).toEqual([9, 8, 7]);
      const some = await store.events.find({ boardId: board, seq: { $in: [2, 5, 11] } }, { sort: [['seq', 1]] });
      expect(some.map((e) => e.seq)).toEqual([2, 5]);
      const range = await store.events.find({ boardId: board, at: { $gte: 1004, $lte: 1006 } }, { sort: [['at', 1]] });
      expect(range.map((e) => e.seq)).toEqual([4, 5, 6]);
      expect((await store.events.findOne({ boardId: board, seq: 7 }))!._id).toBe(`${board}:7`);
      const selected = await store.events.select({ boardId: board, seq: { $lte: 2 } }, ['seq'], { sort: [['seq', 1]] });
      expect(selected).toEqual([
        { _id: `${board}:1`, seq: 1 },
        { _id: `${board}:2`, seq: 2 },
      ]);
    });

    it('enforces compound unique indexes', async () => {
      const day = unique('board');
      const stats = { _id: unique('day'), version: 1, boardId: day, day: '2026-11-29', stats: {}, fromVersion: 1 };
      await store.boardStatsDays.insert(stats);
      await expect(store.boardStatsDays.insert({ ...stats, _id: unique('day') })).rejects.toBeInstanceOf(
        DuplicateKeyError,
      );
    });

    it('keeps one event per board and seq, its id made of them', async () => {
      const board = unique('board');
      expect(event(board, 1)._id).toBe(eventId(board, 1));
      await store.events.insert(event(board, 1));
      await expect(store.events.insert({ ...event(board, 1), data: { again: true } })).rejects.toBeInstanceOf(
        DuplicateKeyError,
      );
      expect((await store.events.find({ boardId: board })).map((e) => e.data)).toEqual([{ n: 1 }]);
    });

    it('keeps compound unique keys on update and unset, and shows nothing but the record', async () => {
      const a = {
        _id: unique('allow'),
        version: 1,
        kind: 'domain',
        value: unique('a.example'),
        reason: 'r',
        addedBy: 'x',
        at: 1,
      } as const;
      const b = { ...a, _id: unique('allow'), value: unique('b.example') };
      await store.allowlist.insert(a);
      await store.allowlist.insert(b);
      expect(await store.allowlist.get(a._id)).toEqual(a);
      expect(await store.allowlist.find({ kind: 'domain', value: { $in: [a.value, b.value] } })).toHaveLength(2);
      const err = await store.allowlist.update(b._id, 1, { value: a.value }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DuplicateKeyError);
      expect((err as DuplicateKeyError).index).toBe('kind_value');
      expect((await store.allowlist.get(b._id))!.value).toBe(b.value);
      // A record at another version moves nothing, and a moved key frees the one it left.
      expect(await store.allowlist.update(a._id, 2, { value: unique('c.example') })).toBeNull();
      const moved = await store.allowlist.update(a._id, 1, { kind: 'address', reason: 'moved' });
      expect(moved).toEqual({ ...a, kind: 'address', reason: 'moved', version: 2 });
      expect(await store.allowlist.update(b._id, 1, { value: a.value })).toEqual({ ...b, value: a.value, version: 2 });
      await expect(store.allowlist.insert({ ...a, _id: unique('allow'), kind: 'address' })).rejects.toBeInstanceOf(
        DuplicateKeyError,
      );
      // Unsetting a key's field counts it missing, as a unique index does.
      expect(await store.allowlist.update(b._id, 2, {}, ['value'])).toEqual({ ...b, version: 3, value: undefined });
    });

    it('inserts the missing ones of a list in order, leaving those already stored as they were', async () => {
      const board = unique('board');
      await store.events.insert({ ...event(board, 2), data: { kept: true } });
      await store.events.insertMissing([event(board, 1), event(board, 2), event(board, 3), event(board, 4)]);
      const all = await store.events.find({ boardId: board }, { sort: [['seq', 1]] });
      expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect(all[1]!.data).toEqual({ kept: true });
      await store.events.insertMissing([event(board, 3), event(board, 4)]);
      expect(await store.events.count({ boardId: board })).toBe(4);
      // Stored ones scattered through the list (a copy repeated after a failover): each gap filled once.
      await store.events.insert({ ...event(board, 6), data: { kept: 6 } });
      await store.events.insert({ ...event(board, 8), data: { kept: 8 } });
      await store.events.insertMissing([5, 6, 7, 8, 9].map((seq) => event(board, seq)));
      const after = await store.events.find({ boardId: board }, { sort: [['seq', 1]] });
      expect(after.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect([after[5]!.data, after[7]!.data]).toEqual([{ kept: 6 }, { kept: 8 }]);
    });

    it('deletes one (optionally at a version) and many', async () => {
      const a = account();
      await store.accounts.insert(a);
      expect(await store.accounts.delete(a._id, 5)).toBe(false);
      expect(await store.accounts.delete(a._id, 1)).toBe(true);
      expect(await store.accounts.delete(a._id)).toBe(false);
      await store.accounts.insert(account({ email: a.email }));
      const board = unique('board');
      for (let seq = 1; seq <= 4; seq++) await store.events.insert(event(board, seq));
      expect(await store.events.deleteMany({ boardId: board, seq: { $lte: 2 } })).toBe(2);
      expect(await store.events.count({ boardId: board })).toBe(2);
    });

    it('modify: read-modify-write lands every concurrent change once, refuses by throwing, and reports a missing document', async () => {
      const a = account({ referralMonths: 0 });
      await store.accounts.insert(a);
      await Promise.all(
        Array.from({ length: 5 }, () =>
          modify(store.accounts, a._id, (cur) => ({ referralMonths: cur.referralMonths + 1 })),
        ),
      );
      expect((await store.accounts.get(a._id))!.referralMonths).toBe(5);
      await expect(
        modify(store.accounts, a._id, () => {
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect((await store.accounts.get(a._id))!.version).toBe(6);
      expect(await modify(store.accounts, 'missing', () => ({ displayName: 'x' }))).toBeNull();
      // A change that answers null leaves the document as it is and returns it.
      expect((await modify(store.accounts, a._id, () => null))!.version).toBe(6);
      expect((await store.accounts.get(a._id))!.version).toBe(6);
    });

    it('keeps restore points once per board seq, and reads them newest first past the ones to keep', async () => {
      const boardId = unique('board');
      const point = (seq: number) => ({
        _id: `rp_${boardId}_${seq}`,
        version: 1,
        boardId,
        seq,
        capturedAt: seq,
        reason: 'batch',
        itemCount: seq,
        fingerprint: `sha256:${'0'.repeat(64)}`,
        parts: 1,
      });
      for (const seq of [3, 1, 2]) await store.restorePoints.insert(point(seq));
      await expect(store.restorePoints.insert({ ...point(2), _id: `other-${boardId}` })).rejects.toBeInstanceOf(
        DuplicateKeyError,
      );
      expect(
        (await store.restorePoints.select({ boardId }, ['seq'], { sort: [['seq', -1]], skip: 1 })).map((p) => p.seq),
      ).toEqual([2, 1]);
      expect(await store.restorePoints.deleteMany({ boardId, capturedAt: { $lt: 2 } })).toBe(1);
    });

    it('keeps billing records one per project and one per provider customer, and applied provider events once', async () => {
      const record = (projectId: string, customerId: string) => ({
        _id: projectId,
        version: 1,
        accountId: 'acc',
        customerId,
        subscriptionId: null,
        status: null,
        interval: null,
        priceId: null,
        currentPeriodEnd: null,
        cancelAtPeriodEnd: false,
        changedAt: null,
        pastDueSince: null,
      });
      const [p1, p2, c1] = [unique('proj'), unique('proj'), unique('cus')];
      await store.billing.insert(record(p1, c1));
      await expect(store.billing.insert(record(p2, c1))).rejects.toBeInstanceOf(DuplicateKeyError);
      await expect(store.billing.insert(record(p1, unique('cus')))).rejects.toBeInstanceOf(DuplicateKeyError);
      expect((await store.billing.findOne({ customerId: c1 }))!._id).toBe(p1);
      const evt = { _id: unique('evt'), version: 1, projectId: p1, type: 'customer.subscription.updated', at: 1 };
      await store.billingEvents.insert(evt);
      await expect(store.billingEvents.insert(evt)).rejects.toBeInstanceOf(DuplicateKeyError);
    });

    const work = (n: number, title = `item ${n}`) => ({ workId: `W-${n}`, title, state: 'ready' });
    const loaded = async (boardId: string) => {
      const board = await store.boards.load(boardId);
      return (
        board && {
          version: board.record.version,
          lastSeq: board.record.lastSeq,
          items: Object.fromEntries(board.items.map((i) => [i.workId, i])),
        }
      );
    };

    it('commits a header and only the items that changed, at the expected version, and reads what changed since a version', async () => {
      const boardId = unique('board');
      await store.boards.insert(newBoardRecord(boardId));
      expect(await loaded(boardId)).toEqual({ version: 1, lastSeq: 0, items: {} });
      expect(
        await store.boards.commit(boardId, 1, { lastSeq: 2, nextWorkSeq: 3 }, { put: [work(1), work(2)], removed: [] }),
      ).toBe(true);
      expect(await store.boards.commit(boardId, 1, { lastSeq: 9 }, { put: [work(9)], removed: [] })).toBe(false);
      expect(await store.boards.commit(unique('missing'), 1, { lastSeq: 9 }, { put: [work(9)], removed: [] })).toBe(
        false,
      );
      expect(await loaded(boardId)).toEqual({ version: 2, lastSeq: 2, items: { 'W-1': work(1), 'W-2': work(2) } });
      expect(await store.boards.commit(boardId, 2, { lastSeq: 3 }, { put: [work(2, 'TWO')], removed: ['W-1'] })).toBe(
        true,
      );
      expect(
        await store.boards.commit(boardId, 3, { lastSeq: 4, nextWorkSeq: 4 }, { put: [work(3)], removed: [] }),
      ).toBe(true);
      expect(await loaded(boardId)).toEqual({
        version: 4,
        lastSeq: 4,
        items: { 'W-2': work(2, 'TWO'), 'W-3': work(3) },
      });
      // What a node holding an older version reads: the items written after it, and those removed after it.
      const since = async (version: number) => {
        const changes = (await store.boards.changesSince(boardId, version))!;
        return {
          version: changes.record.version,
          items: changes.items.map((i) => i.workId).sort(),
          removed: [...changes.removed].sort(),
        };
      };
      expect(await since(4)).toEqual({ version: 4, items: [], removed: [] });
      expect(await since(3)).toEqual({ version: 4, items: ['W-3'], removed: [] });
      expect(await since(2)).toEqual({ version: 4, items: ['W-2', 'W-3'], removed: ['W-1'] });
      expect(await since(1)).toEqual({ version: 4, items: ['W-2', 'W-3'], removed: ['W-1'] });
      expect(await store.boards.changesSince(unique('missing'), 1)).toBeNull();
      // An item taken off and put back.
      expect(await store.boards.commit(boardId, 4, { lastSeq: 5 }, { put: [work(1, 'back')], removed: [] })).toBe(true);
      expect(await since(4)).toEqual({ version: 5, items: ['W-1'], removed: [] });
      expect((await loaded(boardId))!.items['W-1']).toEqual(work(1, 'back'));
    });

    it('lets exactly one of several commits at one version land, with its items and none of the others', async () => {
      const boardId = unique('board');
      await store.boards.insert(newBoardRecord(boardId));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.boards.commit(boardId, 1, { lastSeq: i + 1 }, { put: [work(i + 10)], removed: [] }),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(await loaded(boardId)).toEqual({
        version: 2,
        lastSeq: winner + 1,
        items: { [`W-${winner + 10}`]: work(winner + 10) },
      });
    });

    it('commits and reads a large change whole (a rewind of a large board)', async () => {
      const boardId = unique('board');
      await store.boards.insert(newBoardRecord(boardId));
      const many = Array.from({ length: 1200 }, (_, i) => work(i + 1));
      expect(await store.boards.commit(boardId, 1, { lastSeq: 1 }, { put: many, removed: [] })).toBe(true);
      expect(Object.keys((await loaded(boardId))!.items)).toHaveLength(1200);
      const removed = many.slice(0, 700).map((i) => i.workId);
      expect(await store.boards.commit(boardId, 2, { lastSeq: 2 }, { put: [work(1000, 'changed')], removed })).toBe(
        true,
      );
      const after = (await loaded(boardId))!;
      expect(Object.keys(after.items)).toHaveLength(500);
      expect(after.items['W-1000']).toEqual(work(1000, 'changed'));
      expect(after.items['W-1']).toBeUndefined();
      expect((await store.boards.changesSince(boardId, 3))!.removed).toEqual([]);
      expect((await store.boards.changesSince(boardId, 2))!.removed).toHaveLength(700);
    });

    it('answers a board’s version as each write leaves it, however often it was read before or during the write', async () => {
      const boardId = unique('board');
      expect(await store.boards.versionOf(boardId)).toBeNull();
      await store.boards.insert(newBoardRecord(boardId));
      expect(await store.boards.versionOf(boardId)).toBe(1);
      expect(await store.boards.versionOf(boardId)).toBe(1);
      // Read while the commit is under way: whatever that read says, the read after it lands sees it.
      const committing = store.boards.commit(boardId, 1, { lastSeq: 1 }, { put: [work(1)], removed: [] });
      expect([1, 2]).toContain(await store.boards.versionOf(boardId));
      expect(await committing).toBe(true);
      expect(await store.boards.versionOf(boardId)).toBe(2);
      expect(await store.boards.commit(boardId, 1, { lastSeq: 9 }, { put: [], removed: [] })).toBe(false); // refused: nothing moves
      expect(await store.boards.versionOf(boardId)).toBe(2);
      await store.boards.update(boardId, 2, { nextDeadline: 5 });
      expect(await store.boards.versionOf(boardId)).toBe(3);
      await store.boards.delete(boardId);
      expect(await store.boards.versionOf(boardId)).toBeNull();
      await store.boards.insert(newBoardRecord(boardId));
      expect(await store.boards.versionOf(boardId)).toBe(1);
    });

    it('reads and updates a header without its items, and deletes the items with the board', async () => {
      const boardId = unique('board');
      await store.boards.insert({ ...newBoardRecord(boardId), lastSeq: 7, nextDeadline: 50 });
      await store.boards.commit(boardId, 1, { lastSeq: 8 }, { put: [work(1)], removed: [] });
      expect(await store.boards.get(boardId)).toEqual({
        ...newBoardRecord(boardId),
        version: 2,
        lastSeq: 8,
        nextDeadline: 50,
      });
      expect(await store.boards.versionOf(boardId)).toBe(2);
      expect(await store.boards.versionOf('missing')).toBeNull();
      expect(await store.boards.select({ _id: boardId }, ['lastSeq', 'nextDeadline'])).toEqual([
        { _id: boardId, lastSeq: 8, nextDeadline: 50 },
      ]);
      expect(await store.boards.find({ nextDeadline: { $lte: 50 } })).toEqual([
        { ...newBoardRecord(boardId), version: 2, lastSeq: 8, nextDeadline: 50 },
      ]);
      expect(await store.boards.update(boardId, 2, { nextDeadline: 60 })).toEqual({
        ...newBoardRecord(boardId),
        version: 3,
        lastSeq: 8,
        nextDeadline: 60,
      });
      expect((await loaded(boardId))!.items).toEqual({ 'W-1': work(1) });
      expect(await store.boards.delete(boardId)).toBe(true);
      expect(await store.boards.load(boardId)).toBeNull();
      expect(await store.boards.versionOf(boardId)).toBeNull();
      // A board made again under the id starts with no items.
      await store.boards.insert(newBoardRecord(boardId));
      expect(await loaded(boardId)).toEqual({ version: 1, lastSeq: 0, items: {} });
    });

    it('reads index ranges in either direction, past other keys, with or without the documents', async () => {
      const board = unique('board');
      const other = unique('board');
      for (let seq = 1; seq <= 30; seq++) await store.events.insert(event(board, seq));
      for (let seq = 1; seq <= 5; seq++) await store.events.insert(event(other, seq));
      const newest = await store.events.find({ boardId: board, seq: { $lte: 20 } }, { sort: [['seq', -1]], limit: 4 });
      expect(newest.map((e) => e.seq)).toEqual([20, 19, 18, 17]);
      const oldest = await store.events.select({ boardId: board, seq: { $gte: 28 } }, ['seq'], { sort: [['seq', 1]] });
      expect(oldest).toEqual([28, 29, 30].map((seq) => ({ _id: `${board}:${seq}`, seq })));
      expect(await store.events.count({ boardId: board, seq: { $gt: 10, $lt: 15 } })).toBe(4);
      expect(await store.events.count({ boardId: other })).toBe(5);
      // A condition on a field the index does not hold, sorted by one it does not order.
      const byData = await store.events.find(
        { boardId: board, type: 'item.created', workId: { $in: ['W-3', 'W-12'] } },
        { sort: [['at', -1]] },
      );
      expect(byData.map((e) => e.seq)).toEqual([12, 3]);
      expect(await store.events.find({ boardId: board, workId: { $exists: false } })).toEqual([]);
      const ids = await store.events.find({ _id: { $gt: `${board}:3`, $lte: `${board}:5` } });
      expect(ids.map((e) => e._id)).toEqual([`${board}:30`, `${board}:4`, `${board}:5`]);
      const down = await store.events.find(
        { _id: { $gte: `${board}:4`, $lte: `${board}:5` } },
        { sort: [['_id', -1]] },
      );
      expect(down.map((e) => e._id)).toEqual([`${board}:5`, `${board}:4`]);
    });

    it('usage add: creates a missing row with its fields and counts and says so; adds to a stored one, leaving its fields', async () => {
      const id = unique('usage');
      const fields = { day: '2026-11-28', scope: 'board', key: 'board-1' } as const;
      expect(await store.usage.add(id, fields, { requests: 3, commits: 1 })).toBe(true);
      expect(await store.usage.get(id)).toEqual({
        _id: id,
        version: 1,
        ...fields,
        counts: { requests: 3, commits: 1 },
      });
      expect(await store.usage.versionOf(id)).toBe(1);
      expect(await store.usage.find({ day: '2026-11-28', scope: 'board' })).toHaveLength(1);

      const other = { day: '2026-11-29', scope: 'account', key: 'x' } as const;
      expect(await store.usage.add(id, other, { requests: 2, events: 5 })).toBe(false);
      expect(await store.usage.get(id)).toEqual({
        _id: id,
        version: 2,
        ...fields,
        counts: { requests: 5, commits: 1, events: 5 },
      });
      // A row created without counters has an empty set of them; a counter named as an Object method starts at 0.
      const bare = unique('usage');
      expect(await store.usage.add(bare, fields, {})).toBe(true);
      expect(await store.usage.get(bare)).toEqual({ _id: bare, version: 1, ...fields, counts: {} });
      expect(await store.usage.add(bare, fields, { toString: 2, constructor: 1 })).toBe(false);
      expect((await store.usage.get(bare))!.counts).toEqual({ toString: 2, constructor: 1 });
    });

    it('usage add: concurrent adds to one row sum exactly, and exactly one says it created the row', async () => {
      const id = unique('usage');
      const fields = { day: '2026-11-28', scope: 'platform', key: 'all' } as const;
      const created = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          store.usage.add(id, fields, i % 5 === 0 ? { requests: 1, [`c${i}`]: i } : { requests: 1, events: 2 }),
        ),
      );
      expect(created.filter(Boolean)).toHaveLength(1);
      const row = (await store.usage.get(id))!;
      expect(row.version).toBe(50);
      expect(row).toMatchObject(fields);
      const expected: Record<string, number> = { requests: 50, events: 80 };
      for (let i = 0; i < 50; i += 5) expected[`c${i}`] = i;
      expect(row.counts).toEqual(expected);
    });

    it('usage add: refuses a counter name that is not a plain field name, and a count that is not a number, writing nothing', async () => {
      const id = unique('usage');
      const fields = { day: '2026-11-28', scope: 'address', key: '192.0.2.1' } as const;
      for (const bad of ['a.b', '$inc', '', '__proto__'])
        await expect(store.usage.add(id, fields, { requests: 1, [bad]: 1 })).rejects.toThrow(/counter name refused/);
      await expect(store.usage.add(id, fields, { requests: Number.NaN })).rejects.toThrow(/not a finite number/);
      expect(await store.usage.get(id)).toBeNull();
      await store.usage.add(id, fields, { requests: 1 });
      await expect(store.usage.add(id, fields, { 'counts.requests': 1 })).rejects.toThrow(/counter name refused/);
      expect(await store.usage.get(id)).toMatchObject({ version: 1, counts: { requests: 1 } });
    });

    it('answers ping while open', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    if (harness.reopen) {
      it('keeps every acknowledged write across a reopen', async () => {
        const a = account();
        await store.accounts.insert(a);
        await store.accounts.update(a._id, 1, { displayName: 'Kept' });
        const gone = account();
        await store.accounts.insert(gone);
        await store.accounts.delete(gone._id);
        await store.boards.insert(newBoardRecord('b-reopen'));
        await store.boards.commit('b-reopen', 1, { lastSeq: 1 }, { put: [work(1, 'kept'), work(2)], removed: [] });
        await store.boards.commit('b-reopen', 2, { lastSeq: 2 }, { put: [work(2, 'changed')], removed: [] });
        store = await harness.reopen!(store);
        expect((await loaded('b-reopen'))!.items).toEqual({ 'W-1': work(1, 'kept'), 'W-2': work(2, 'changed') });
        expect((await store.boards.changesSince('b-reopen', 2))!.items).toEqual([work(2, 'changed')]);
        expect(await store.accounts.get(a._id)).toMatchObject({ displayName: 'Kept', version: 2 });
        expect(await store.accounts.get(gone._id)).toBeNull();
        await expect(store.accounts.insert(account({ email: a.email }))).rejects.toBeInstanceOf(DuplicateKeyError);
      });
    }
  });
}
