// The store contract: every adapter must pass these, so callers see one behaviour.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DuplicateKeyError, modify, type AccountRecord, type EventRecord, type Store } from '../../store/ports/store.js';
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
  _id: `${boardId}:${seq}`, version: 1, boardId, seq, type: 'item.created', actor: 'user:x', workId: `W-${seq}`, at: 1000 + seq, data: { n: seq },
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
      await expect(store.accounts.insert({ ...account(), _id: a._id })).rejects.toBeInstanceOf(DuplicateKeyError);
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
      await expect(store.accounts.update(b._id, 1, { email: a.email })).rejects.toBeInstanceOf(DuplicateKeyError);
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
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.accounts.update(a._id, version, { displayName: `v${version}n${i}` })));
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
      const page = await store.events.find({ boardId: board, seq: { $gt: 3 } }, { sort: [['seq', -1]], skip: 1, limit: 3 });
      expect(page.map((e) => e.seq)).toEqual([9, 8, 7]);
      const some = await store.events.find({ boardId: board, seq: { $in: [2, 5, 11] } }, { sort: [['seq', 1]] });
      expect(some.map((e) => e.seq)).toEqual([2, 5]);
      const range = await store.events.find({ boardId: board, at: { $gte: 1004, $lte: 1006 } }, { sort: [['at', 1]] });
      expect(range.map((e) => e.seq)).toEqual([4, 5, 6]);
      expect((await store.events.findOne({ boardId: board, seq: 7 }))!._id).toBe(`${board}:7`);
      const selected = await store.events.select({ boardId: board, seq: { $lte: 2 } }, ['seq'], { sort: [['seq', 1]] });
      expect(selected).toEqual([{ _id: `${board}:1`, seq: 1 }, { _id: `${board}:2`, seq: 2 }]);
    });

    it('enforces compound unique indexes', async () => {
      const board = unique('board');
      await store.events.insert(event(board, 1));
      await expect(store.events.insert({ ...event(board, 1), _id: unique('ev') })).rejects.toBeInstanceOf(DuplicateKeyError);
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
      await Promise.all(Array.from({ length: 5 }, () => modify(store.accounts, a._id, (cur) => ({ referralMonths: cur.referralMonths + 1 }))));
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
      const point = (seq: number) => ({ _id: `rp_${boardId}_${seq}`, version: 1, boardId, seq, capturedAt: seq, reason: 'batch', itemCount: seq, fingerprint: `sha256:${'0'.repeat(64)}`, content: '{"items":[]}' });
      for (const seq of [3, 1, 2]) await store.restorePoints.insert(point(seq));
      await expect(store.restorePoints.insert({ ...point(2), _id: `other-${boardId}` })).rejects.toBeInstanceOf(DuplicateKeyError);
      expect((await store.restorePoints.select({ boardId }, ['seq'], { sort: [['seq', -1]], skip: 1 })).map((p) => p.seq)).toEqual([2, 1]);
      expect(await store.restorePoints.deleteMany({ boardId, capturedAt: { $lt: 2 } })).toBe(1);
    });

    it('keeps billing records one per project and one per provider customer, and applied provider events once', async () => {
      const record = (projectId: string, customerId: string) => ({ _id: projectId, version: 1, accountId: 'acc', customerId, subscriptionId: null, status: null, interval: null, priceId: null, currentPeriodEnd: null, cancelAtPeriodEnd: false, changedAt: null, pastDueSince: null });
      const [p1, p2, c1] = [unique('proj'), unique('proj'), unique('cus')];
      await store.billing.insert(record(p1, c1));
      await expect(store.billing.insert(record(p2, c1))).rejects.toBeInstanceOf(DuplicateKeyError);
      await expect(store.billing.insert(record(p1, unique('cus')))).rejects.toBeInstanceOf(DuplicateKeyError);
      expect((await store.billing.findOne({ customerId: c1 }))!._id).toBe(p1);
      const evt = { _id: unique('evt'), version: 1, projectId: p1, type: 'customer.subscription.updated', at: 1 };
      await store.billingEvents.insert(evt);
      await expect(store.billingEvents.insert(evt)).rejects.toBeInstanceOf(DuplicateKeyError);
    });

    it('patches dotted paths at the expected version, leaving the rest of the document as it was', async () => {
      const boardId = unique('board');
      await store.boards.insert({ _id: boardId, version: 1, nextWorkSeq: 1, nextFencingToken: 1, lastSeq: 0, items: { 'W-1': { title: 'one', n: 1 }, 'W-2': { title: 'two' } }, nextDeadline: null });
      const patched = await store.boards.patch(boardId, 1, { 'items.W-2': { title: 'TWO' }, 'items.W-3': { title: 'three' }, 'items.W-1.title': 'uno', lastSeq: 4 });
      // What patch returns leaves out the field stored apart, so a commit never reads a board whole.
      expect(patched).toEqual({ _id: boardId, version: 2, nextWorkSeq: 1, nextFencingToken: 1, lastSeq: 4, nextDeadline: null });
      expect(await store.boards.patch(boardId, 1, { lastSeq: 9 })).toBeNull();
      expect(await store.boards.get(boardId)).toEqual({ ...patched, items: { 'W-1': { title: 'uno', n: 1 }, 'W-2': { title: 'TWO' }, 'W-3': { title: 'three' } } });
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => store.boards.patch(boardId, 2, { [`items.W-${i + 10}`]: { title: String(i) } })));
      expect(results.filter((r) => r !== null)).toHaveLength(1);
      expect(Object.keys((await store.boards.get(boardId))!.items)).toHaveLength(4);
    });

    it('removes dotted paths in the same version-checked patch (an item a rewind takes away)', async () => {
      const boardId = unique('board');
      await store.boards.insert({ _id: boardId, version: 1, nextWorkSeq: 4, nextFencingToken: 1, lastSeq: 0, items: { 'W-1': { title: 'one' }, 'W-2': { title: 'two' }, 'W-3': { title: 'three' } }, nextDeadline: null, counts: { ready: 3 } });
      expect(await store.boards.patch(boardId, 7, { lastSeq: 1 }, ['items.W-2'])).toBeNull();
      const patched = await store.boards.patch(boardId, 1, { 'items.W-1': { title: 'ONE' }, lastSeq: 2 }, ['items.W-2', 'items.W-9', 'counts.ready']);
      expect(patched).toEqual({ _id: boardId, version: 2, nextWorkSeq: 4, nextFencingToken: 1, lastSeq: 2, nextDeadline: null, counts: {} });
      expect((await store.boards.get(boardId))!.items).toEqual({ 'W-1': { title: 'ONE' }, 'W-3': { title: 'three' } });
      expect(await store.boards.getEntry(boardId, 'W-2')).toBeNull();
    });

    it('reads one entry of a field stored apart, or the document without it', async () => {
      const boardId = unique('board');
      await store.boards.insert({ _id: boardId, version: 1, nextWorkSeq: 3, nextFencingToken: 1, lastSeq: 7, items: { 'W-1': { title: 'one' }, 'W-2': { title: 'two' } }, nextDeadline: 50 });
      expect(await store.boards.getEntry(boardId, 'W-2')).toEqual({ title: 'two' });
      expect(await store.boards.versionOf(boardId)).toBe(1);
      expect(await store.boards.versionOf('missing')).toBeNull();
      expect(await store.boards.getEntry(boardId, 'W-9')).toBeNull();
      expect(await store.boards.getEntry('missing', 'W-1')).toBeNull();
      expect(await store.boards.select({ _id: boardId }, ['lastSeq', 'nextDeadline'])).toEqual([{ _id: boardId, lastSeq: 7, nextDeadline: 50 }]);
      await store.boards.update(boardId, 1, { items: { 'W-5': { title: 'five' } } });
      expect(await store.boards.versionOf(boardId)).toBe(2);
      expect((await store.boards.get(boardId))!.items).toEqual({ 'W-5': { title: 'five' } });
      expect(await store.boards.getEntry(boardId, 'W-1')).toBeNull();
      expect(await store.boards.delete(boardId)).toBe(true);
      expect(await store.boards.getEntry(boardId, 'W-5')).toBeNull();
      expect(await store.boards.versionOf(boardId)).toBeNull();
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
      const byData = await store.events.find({ boardId: board, type: 'item.created', workId: { $in: ['W-3', 'W-12'] } }, { sort: [['at', -1]] });
      expect(byData.map((e) => e.seq)).toEqual([12, 3]);
      expect(await store.events.find({ boardId: board, workId: { $exists: false } })).toEqual([]);
      const ids = await store.events.find({ _id: { $gt: `${board}:3`, $lte: `${board}:5` } });
      expect(ids.map((e) => e._id)).toEqual([`${board}:30`, `${board}:4`, `${board}:5`]);
      const down = await store.events.find({ _id: { $gte: `${board}:4`, $lte: `${board}:5` } }, { sort: [['_id', -1]] });
      expect(down.map((e) => e._id)).toEqual([`${board}:5`, `${board}:4`]);
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
        await store.boards.insert({ _id: 'b-reopen', version: 1, nextWorkSeq: 1, nextFencingToken: 1, lastSeq: 0, items: { 'W-1': { title: 'kept' } }, nextDeadline: null });
        await store.boards.patch('b-reopen', 1, { 'items.W-2': { title: 'patched' } });
        store = await harness.reopen!(store);
        expect((await store.boards.get('b-reopen'))!.items).toEqual({ 'W-1': { title: 'kept' }, 'W-2': { title: 'patched' } });
        expect(await store.accounts.get(a._id)).toMatchObject({ displayName: 'Kept', version: 2 });
        expect(await store.accounts.get(gone._id)).toBeNull();
        await expect(store.accounts.insert(account({ email: a.email }))).rejects.toBeInstanceOf(DuplicateKeyError);
      });
    }
  });
}
