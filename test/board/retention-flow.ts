// Retention on a store: what ages out by plan or expiry is deleted, and nothing younger.
import { describe, expect, it } from 'vitest';
import { purgeExpired } from '../../src/board/retention.js';
import { capturePoint } from '../../src/board/restore-points.js';
import { DAY_MS, FREE_POINTS } from '../../src/plans.js';
import { emptyBoard } from '../../machines/board.js';
import type { Committed } from '../../actors/board-actor.js';
import type { EventRecord } from '../../store/ports/store.js';
import { useStore, type OpenedStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const NOW = Date.UTC(2026, 10, 22);
const HOUR = 3_600_000;
const daysAgo = (d: number) => NOW - d * DAY_MS;
const committedAt = (lastSeq: number): Committed => ({
  board: emptyBoard(),
  record: { _id: 'b', version: lastSeq + 1, nextWorkSeq: 1, nextFencingToken: 1, lastSeq, nextDeadline: null },
});

export function retentionFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`retention on ${name}`, () => {
    const used = useStore(open);

    const project = async (plan: 'free' | 'pro') => {
      const id = unique('p');
      await used.store.projects.insert({
        _id: id,
        version: 1,
        name: id,
        ownerId: 'acc',
        plan,
        createdAt: daysAgo(400),
        lastActivityAt: NOW,
      });
      return id;
    };
    const events = async (boardId: string, ages: number[]) => {
      const docs: EventRecord[] = ages.map((age, i) => ({
        _id: `${boardId}:${i + 1}`,
        version: 1,
        boardId,
        seq: i + 1,
        type: 'item.created',
        actor: 'user:a',
        workId: `W-${i + 1}`,
        at: daysAgo(age),
        data: {},
      }));
      await used.store.events.insertMissing(docs);
    };
    const seqs = async (boardId: string) =>
      (await used.store.events.select({ boardId }, ['seq'], { sort: [['seq', 1]] })).map((e) => e.seq);

    it('deletes by plan retention and expiry, keeping everything younger', async () => {
      const free = await project('free');
      const pro = await project('pro');
      const quiet = await project('free');
      await events(free, [30, 20, 8, 7.5, 6, 1, 0]);
      await events(pro, [200, 179, 30, 1]);
      await events(quiet, [60, 50]);
      for (const [boardId, age] of [
        [free, 8],
        [free, 1],
        [pro, 8],
      ] as const) {
        await used.store.shouts.insert({
          _id: `${boardId}:${age}`,
          version: 1,
          boardId,
          from: 'user:a',
          text: 'hi',
          kind: 'info',
          workId: null,
          to: null,
          at: daysAgo(age),
          deliveredAt: null,
        });
        await used.store.presence.insert({
          _id: `${boardId}|agent:${age}`,
          version: 1,
          boardId,
          principal: `agent:${age}`,
          status: 'idle',
          note: '',
          workId: null,
          seenAt: daysAgo(age),
        });
        await used.store.audit.insert({
          _id: unique('audit'),
          version: 1,
          at: daysAgo(age),
          actor: 'user:a',
          action: 'override',
          projectId: boardId,
          data: {},
        });
      }
      const accountAudit = [unique('old'), unique('kept')];
      await used.store.audit.insert({
        _id: accountAudit[0]!,
        version: 1,
        at: daysAgo(181),
        actor: 'user:a',
        action: 'login',
        projectId: null,
        data: {},
      });
      await used.store.audit.insert({
        _id: accountAudit[1]!,
        version: 1,
        at: daysAgo(100),
        actor: 'user:a',
        action: 'login',
        projectId: null,
        data: {},
      });
      const account = unique('acc');
      await used.store.sessions.insert({
        _id: unique('s'),
        version: 1,
        accountId: account,
        createdAt: daysAgo(31),
        expiresAt: NOW - 1,
        revoked: false,
      });
      await used.store.sessions.insert({
        _id: unique('s'),
        version: 1,
        accountId: account,
        createdAt: daysAgo(1),
        expiresAt: NOW + DAY_MS,
        revoked: false,
      });
      await used.store.linkTokens.insert({
        _id: unique('l'),
        version: 1,
        accountId: account,
        purpose: 'reset-password',
        email: 'a@example.com',
        createdAt: daysAgo(1),
        expiresAt: NOW - 1,
      });
      await used.store.linkTokens.insert({
        _id: unique('l'),
        version: 1,
        accountId: account,
        purpose: 'verify-email',
        email: 'a@example.com',
        createdAt: NOW,
        expiresAt: NOW + DAY_MS,
      });

      const point = (boardId: string, seq: number, age: number) => ({
        _id: `rp_${boardId}_${seq}`,
        version: 1,
        boardId,
        seq,
        capturedAt: daysAgo(age),
        reason: 'batch',
        itemCount: 0,
        fingerprint: 'sha256:x',
        parts: 1,
      });
      for (const [boardId, seq, age] of [
        [free, 1, 30],
        [free, 2, 1],
        [pro, 1, 181],
        [pro, 2, 30],
      ] as const) {
        await used.store.restorePoints.insert(point(boardId, seq, age));
        await used.store.restorePointParts.insert({
          _id: `rp_${boardId}_${seq}:0`,
          version: 1,
          pointId: `rp_${boardId}_${seq}`,
          boardId,
          n: 0,
          text: '{"items":[]}',
          capturedAt: daysAgo(age),
        });
      }

      const grant = (id: string, expiresAt: number) => ({
        _id: id,
        version: 1,
        userCodeHash: id,
        clientName: 'agent',
        projectId: null,
        status: 'pending' as const,
        approvedBy: null,
        approvedProjectId: null,
        createdAt: expiresAt - 600_000,
        expiresAt,
        lastPolledAt: null,
        interval: 5,
      });
      const grants = [unique('g'), unique('g')];
      await used.store.deviceGrants.insert(grant(grants[0]!, NOW - 2 * 3_600_000));
      await used.store.deviceGrants.insert(grant(grants[1]!, NOW + 600_000));

      const purged = await purgeExpired(used.store, NOW);

      expect(await seqs(free)).toEqual([5, 6, 7]);
      expect(await seqs(pro)).toEqual([2, 3, 4]);
      expect(await seqs(quiet)).toEqual([]);
      expect((await used.store.shouts.select({ boardId: free }, ['at'])).map((s) => s._id)).toEqual([`${free}:1`]);
      expect(await used.store.shouts.count({ boardId: pro })).toBe(1);
      expect((await used.store.presence.select({ boardId: free }, ['seenAt'])).map((p) => p._id)).toEqual([
        `${free}|agent:1`,
      ]);
      expect(await used.store.audit.count({ projectId: free })).toBe(1);
      expect(await used.store.audit.count({ projectId: pro })).toBe(1);
      // A board that dropped to Free keeps its points only as long as Free keeps history.
      expect((await used.store.restorePoints.select({ boardId: free }, ['seq'])).map((p) => p.seq)).toEqual([2]);
      expect((await used.store.restorePoints.select({ boardId: pro }, ['seq'])).map((p) => p.seq)).toEqual([2]);
      // Their parts go with them.
      expect((await used.store.restorePointParts.select({ boardId: free }, ['pointId'])).map((p) => p.pointId)).toEqual(
        [`rp_${free}_2`],
      );
      expect((await used.store.restorePointParts.select({ boardId: pro }, ['pointId'])).map((p) => p.pointId)).toEqual([
        `rp_${pro}_2`,
      ]);
      expect(
        [await used.store.deviceGrants.get(grants[0]!), await used.store.deviceGrants.get(grants[1]!)].map(
          (g) => g !== null,
        ),
      ).toEqual([false, true]);
      expect(await used.store.audit.get(accountAudit[0]!)).toBeNull();
      expect(await used.store.audit.get(accountAudit[1]!)).not.toBeNull();
      expect((await used.store.sessions.select({ accountId: account }, ['expiresAt'])).map((s) => s.expiresAt)).toEqual(
        [NOW + DAY_MS],
      );
      expect((await used.store.linkTokens.select({ accountId: account }, ['purpose'])).map((l) => l.purpose)).toEqual([
        'verify-email',
      ]);
      // Other suites share the used.store, so the totals are at least this suite's own.
      expect(purged.events).toBeGreaterThanOrEqual(4 + 1 + 2);
      expect(purged.shouts).toBeGreaterThanOrEqual(1);
      expect(purged.restorePoints).toBeGreaterThanOrEqual(2);
      expect(purged.sessions).toBeGreaterThanOrEqual(1);
      expect(purged.linkTokens).toBeGreaterThanOrEqual(1);

      // A second pass finds nothing more of these.
      await purgeExpired(used.store, NOW);
      expect(await seqs(free)).toEqual([5, 6, 7]);
    });

    it('leaves a board that dropped from Pro to Free its newest 20 restore points', async () => {
      const boardId = await project('pro');
      for (let seq = 1; seq <= 60; seq++)
        await capturePoint(used.store, boardId, committedAt(seq), 'batch', 'pro', NOW - HOUR + seq * 1000);
      expect(await used.store.restorePoints.count({ boardId })).toBe(60);
      const pro = await used.store.projects.get(boardId);
      await used.store.projects.update(boardId, pro!.version, { plan: 'free' });

      const purged = await purgeExpired(used.store, NOW);
      const seqs = await used.store.restorePoints.select({ boardId }, ['seq'], { sort: [['seq', 1]] });
      expect(seqs.map((p) => p.seq)).toEqual(Array.from({ length: FREE_POINTS.kept }, (_, i) => 41 + i));
      expect(purged.restorePoints).toBeGreaterThanOrEqual(40);
    });

    it('keeps the events copied to a log while it is purged: a new board’s first, and those after a quiet spell', async () => {
      const fresh = await project('free'); // its first commit's events are on their way to the log
      const quiet = await project('free'); // everything it logged has aged out; it starts again
      await events(quiet, [60, 50]);
      const copied = (boardId: string, from: number): EventRecord[] =>
        [from, from + 1].map((seq) => ({
          _id: `${boardId}:${seq}`,
          version: 1,
          boardId,
          seq,
          type: 'item.created',
          actor: 'user:a',
          workId: `W-${seq}`,
          at: NOW,
          data: {},
        }));
      const landing = new Map([
        [fresh, copied(fresh, 1)],
        [quiet, copied(quiet, 3)],
      ]);
      // The copies land just after the purge's first look at the board's log.
      const log = used.store.events;
      const select: typeof log.select = async (filter, fields, options) => {
        const found = await log.select(filter, fields, options);
        const copy = landing.get(filter.boardId as string);
        if (copy) {
          landing.delete(filter.boardId as string);
          await log.insertMissing(copy);
        }
        return found;
      };
      const racing = new Proxy(log, {
        get: (target, prop) => (prop === 'select' ? select : (Reflect.get(target, prop, target) as unknown)),
      });
      await purgeExpired({ ...used.store, events: racing }, NOW);
      expect(landing.size).toBe(0); // both landed mid-purge
      expect(await seqs(fresh)).toEqual([1, 2]);
      expect(await seqs(quiet)).toEqual([3, 4]);
    });
  });
}
