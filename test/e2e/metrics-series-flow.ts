// GET /api/metrics `days` (the per-day series the Insights charts draw) over real HTTP, run on each
// store: a day agents worked through claim, submit, verify and a lease that expires reads as the
// log says and ends with the counts GET /api/status shows; and a board 180 days old (178 days in
// the archive, 2 in its header, written straight into the store) answers every day of its plan's
// retention, contiguous, from one read of the archive on its index by board and day.
import { describe, expect, it, onTestFinished } from 'vitest';
import { dayOf, type DayStats, type SeriesDay } from '../../machines/board-stats.js';
import type { BoardStatsDayRecord, Filter, FindOptions } from '../../store/ports/store.js';
import { digest, head, newBoard } from '../support/board.js';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { until } from '../support/until.js';

/** One read of the archive as the server asked the store for it. */
export interface ArchiveRead {
  filter: Filter<BoardStatsDayRecord>;
  options: FindOptions<BoardStatsDayRecord> | undefined;
}
/** The index the store answers `read` from (by its name), or null when it scans. */
export type IndexOf = (read: ArchiveRead) => Promise<string | null>;

/** One UTC day of GET /api/metrics's `days`. */
type Day = SeriesDay;

const DAY = 86_400_000;
const next = (day: string): string => dayOf(Date.parse(day) + DAY);

export function metricsSeriesFlow(name: string, open: () => Promise<OpenedStore>, indexOf: IndexOf): void {
  describe(`metrics by day on the ${name} store`, () => {
    const served = serveStore(open);
    const srv = () => served.srv;

    it('answers the days as agents worked them: the log’s figures, and today’s counts as the status shows them', async () => {
      const board = await newBoard(srv().url);
      const a = await board.agent('worker');
      const v = await board.agent('checker');
      const viewer = await board.agent('watcher', 'viewer');
      const created = await a.post('/api/items/batch', {
        items: [
          { title: 'gated', verify: 'required' },
          { title: 'gated too', verify: 'required' },
          { title: 'plain' },
          { title: 'left to expire' },
        ],
      });
      expect(created.status, created.text).toBe(201);
      const work = async (workId: string, n: number) => {
        const lease = await a.post('/api/claim', { workId });
        expect(lease.status, lease.text).toBe(200);
        const submitted = await a.post('/api/submit', { leaseId: lease.body.leaseId, head: head(n) });
        expect(submitted.status, submitted.text).toBe(200);
      };
      await work('W-1', 1);
      expect((await v.post('/api/verify', { workId: 'W-1', head: head(1), verdict: 'pass' })).status).toBe(200);
      await work('W-2', 2);
      const failed = await v.post('/api/verify', {
        workId: 'W-2',
        head: head(2),
        verdict: 'fail',
        finding: digest('f'),
      });
      expect(failed.body).toEqual({ workId: 'W-2', state: 'ready' });
      await work('W-3', 3);
      expect((await a.post('/api/claim', { workId: 'W-4', ttlSeconds: 30 })).status).toBe(200);
      srv().advance(31_000);
      await until(async () => (await viewer.get('/api/status')).body.leases.length === 0, {
        timeout: 60_000,
        interval: 100,
        what: 'the lease on W-4 expired by the scheduler',
      });

      const res = await viewer.get('/api/metrics'); // a viewer reads them
      expect(res.status, res.text).toBe(200);
      const days = res.body.days as Day[];
      const status = (await viewer.get('/api/status')).body;
      const events = (await board.owner.get(`/api/activity?projectId=${board.projectId}&limit=200`)).body.events as {
        type: string;
        at: string;
        data: { to?: string; verification?: { verdict: string } };
      }[];
      const today = dayOf(srv().now());
      expect(days.at(-1)!.day).toBe(today);
      for (let i = 1; i < days.length; i++) expect(days[i]!.day).toBe(next(days[i - 1]!.day));
      // Each day as the log tells it (the test may straddle midnight: every day is checked).
      for (const d of days) {
        const on = events.filter((e) => e.at.slice(0, 10) === d.day);
        const verdicts = on.filter((e) => e.type === 'item.verified');
        expect(d).toMatchObject({
          done: on.filter((e) => e.type === 'item.state' && e.data.to === 'done').length,
          grants: on.filter((e) => e.type === 'lease.granted').length,
          expiries: on.filter((e) => e.type === 'lease.expired').length,
          verdicts: verdicts.length,
          passes: verdicts.filter((e) => e.data.verification?.verdict === 'pass').length,
        });
      }
      const total = (f: (d: Day) => number) => days.reduce((n, d) => n + f(d), 0);
      expect([total((d) => d.done), total((d) => d.verdicts), total((d) => d.passes)]).toEqual([2, 2, 1]);
      expect([total((d) => d.grants), total((d) => d.expiries)]).toEqual([4, 1]);
      const last = days.at(-1)!;
      expect(last.counts).toEqual(status.counts);
      expect(last.counts).toMatchObject({ done: 2, ready: 2, claimed: 0 });
      expect(Math.max(...days.map((d) => d.agentsActive))).toBe(2); // the worker and the checker, not the viewer
      const timed = days.filter((d) => d.done > 0);
      expect(timed.length).toBeGreaterThan(0);
      for (const d of timed) expect(d.readyToDoneSeconds.p90).toBeGreaterThanOrEqual(d.readyToDoneSeconds.median!);
      if (days.length === 1) expect(last).toMatchObject({ verifyPassRate: 0.5, leaseExpiryRate: 0.25 });
    });

    it('answers a 180-day board from one indexed read of the archive: every day of the retention, none skipped', async () => {
      const board = await newBoard(srv().url);
      const viewer = await board.agent('watcher', 'viewer');
      const store = srv().store;
      const now = srv().now();
      const dayAt = (n: number) => dayOf(now - (179 - n) * DAY); // day 179 is today
      // Days 0 to 49 as folded before counts and peaks were kept.
      const statsOf = (n: number): DayStats => ({
        done: n % 5,
        grants: n % 7,
        expiries: n % 3 === 0 ? 1 : 0,
        verdicts: n % 4,
        passes: n % 4 ? 1 : 0,
        readyToDone: n % 2 ? { '24': 1 } : {},
        ...(n >= 50 && { counts: { ready: n, done: 180 - n }, agentsPeak: n % 9 }),
      });
      await store.boardStatsDays.insertMissing(
        Array.from({ length: 178 }, (_, n) => ({
          _id: `${board.projectId}:${dayAt(n)}`,
          version: 1,
          boardId: board.projectId,
          day: dayAt(n),
          stats: statsOf(n) as unknown as Record<string, unknown>,
          fromVersion: 1,
        })),
      );
      const header = (await store.boards.get(board.projectId))!;
      const days = { [dayAt(178)]: statsOf(178), [dayAt(179)]: statsOf(179) };
      expect(
        await store.boards.update(board.projectId, header.version, { stats: { days, active: {} } }),
      ).not.toBeNull();

      const archive = store.boardStatsDays;
      const reads: ArchiveRead[] = [];
      let otherCalls = 0;
      const { find, select, count } = archive;
      archive.find = ((filter, options) => {
        if (filter.boardId === board.projectId) reads.push({ filter, options });
        return find.call(archive, filter, options);
      }) as typeof find;
      archive.select = ((filter, fields, options) => {
        if (filter.boardId === board.projectId) otherCalls++;
        return select.call(archive, filter, fields as never, options);
      }) as typeof select;
      archive.count = ((filter) => {
        if (filter.boardId === board.projectId) otherCalls++;
        return count.call(archive, filter);
      }) as typeof count;
      onTestFinished(() => void Object.assign(archive, { find, select, count }));
      const series = async (): Promise<Day[]> => {
        const res = await viewer.get('/api/metrics');
        expect(res.status, res.text).toBe(200);
        return res.body.days as Day[];
      };

      // Free keeps 7 days: the 8 UTC days they touch.
      expect((await series()).map((d) => d.day)).toEqual(Array.from({ length: 8 }, (_, i) => dayAt(172 + i)));
      expect(reads).toHaveLength(1);
      expect(reads[0]!.filter).toEqual({ boardId: board.projectId, day: { $gte: dayAt(172) } });

      const project = (await store.projects.get(board.projectId))!;
      expect(await store.projects.update(board.projectId, project.version, { plan: 'pro' })).not.toBeNull();
      await until(async () => (await series()).length === 180, { what: 'the pro plan’s 180 days' });
      reads.length = 0;
      const all = await series();
      expect(reads).toHaveLength(1);
      expect(otherCalls).toBe(0);
      expect(all.map((d) => d.day)).toEqual(Array.from({ length: 180 }, (_, n) => dayAt(n)));
      all.forEach((d, n) =>
        expect(d, d.day).toEqual({
          day: dayAt(n),
          done: n % 5,
          grants: n % 7,
          expiries: n % 3 === 0 ? 1 : 0,
          verdicts: n % 4,
          passes: n % 4 ? 1 : 0,
          readyToDoneSeconds: n % 2 ? { median: 69.1, p90: 69.1 } : { median: null, p90: null },
          verifyPassRate: n % 4 ? 1 / (n % 4) : null,
          leaseExpiryRate: n % 7 ? (n % 3 === 0 ? 1 : 0) / (n % 7) : null,
          agentsActive: n >= 50 ? n % 9 : 0,
          counts: n >= 50 ? { ready: n, done: 180 - n } : null,
        }),
      );
      expect(await indexOf(reads[0]!)).toMatch(/^boardId_day/);
    });
  });
}
