// Metrics as running aggregates: folded from commits' events, read as a table of cases.
import { describe, expect, it } from 'vitest';
import { BoardDraft, emptyBoard } from '../../machines/board.js';
import { countsByState } from '../../machines/board-queries.js';
import type { BoardItem } from '../../machines/board-item.js';
import {
  closedDays,
  foldStats,
  HEADER_DAYS,
  metricsOf,
  seriesOf,
  withArchived,
  type BoardStats,
  type DayStats,
  type StatEvent,
} from '../../machines/board-stats.js';
import { initialLife } from '../../machines/item-step.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1);
const ev = (type: string, at: number, over: Partial<StatEvent> = {}): StatEvent => ({
  type,
  actor: 'agent:a',
  workId: 'W-1',
  at,
  data: {},
  ...over,
});
const done = (workId: string, at: number, actor = 'agent:a') =>
  ev('item.state', at, { workId, actor, data: { from: 'awaiting_verify', to: 'done' } });
const verdict = (verdict: 'pass' | 'fail', at: number) =>
  ev('item.verified', at, { data: { verification: { verdict } } });

/** A board whose items became ready at the given times. */
function boardWith(readyAt: Record<string, number>) {
  const draft = new BoardDraft(emptyBoard(100));
  for (const [workId, at] of Object.entries(readyAt)) {
    const item: BoardItem = {
      workId,
      title: workId,
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
      rank: 1,
      state: 'done',
      life: initialLife('none', 3),
      progress: null,
      endedLeases: [],
      createdAt: at,
      updatedAt: at,
      readyAt: at,
      version: 1,
    };
    draft.put(item);
  }
  return draft.finish();
}

describe('board metrics from running aggregates', () => {
  const cases: {
    name: string;
    commits: StatEvent[][];
    ready?: Record<string, number>;
    now: number;
    since: number;
    expect: Partial<ReturnType<typeof metricsOf>>;
  }[] = [
    {
      name: 'nothing yet',
      commits: [],
      now: T0,
      since: T0 - 7 * DAY,
      expect: {
        throughputPerDay: [],
        medianReadyToDoneSeconds: null,
        verifyPassRate: null,
        leaseExpiryRate: null,
        agentsActiveLastHour: 0,
      },
    },
    {
      name: 'done per day, across commits',
      commits: [[done('W-1', T0 + 1000), done('W-2', T0 + 2000)], [done('W-3', T0 + DAY + 5)]],
      now: T0 + DAY + 10,
      since: T0 - DAY,
      expect: {
        throughputPerDay: [
          { day: '2026-11-01', done: 2 },
          { day: '2026-11-02', done: 1 },
        ],
      },
    },
    {
      name: 'a rewind putting an item back as done finished nothing',
      commits: [
        [done('W-1', T0 + 1000)],
        [ev('item.state', T0 + 2000, { actor: 'user:o', data: { from: 'ready', to: 'done', rewound: true } })],
      ],
      now: T0 + 2000,
      since: T0 - DAY,
      expect: { throughputPerDay: [{ day: '2026-11-01', done: 1 }] },
    },
    {
      name: 'retention cuts whole days',
      commits: [[done('W-1', T0)], [done('W-2', T0 + 3 * DAY)]],
      now: T0 + 3 * DAY,
      since: T0 + DAY,
      expect: { throughputPerDay: [{ day: '2026-11-04', done: 1 }] },
    },
    {
      name: 'median of ready-to-done times within ~9%',
      ready: { 'W-1': T0, 'W-2': T0, 'W-3': T0 },
      commits: [[done('W-1', T0 + 10_000), done('W-2', T0 + 100_000), done('W-3', T0 + 1_000_000)]],
      now: T0 + 1_000_000,
      since: T0 - DAY,
      expect: {},
    },
    {
      name: 'pass rate',
      commits: [[verdict('pass', T0), verdict('fail', T0), verdict('pass', T0 + 1), verdict('pass', T0 + 2)]],
      now: T0,
      since: T0 - DAY,
      expect: { verifyPassRate: 0.75 },
    },
    {
      name: 'expiry rate',
      commits: [
        [
          ev('lease.granted', T0),
          ev('lease.granted', T0),
          ev('lease.granted', T0),
          ev('lease.granted', T0),
          ev('lease.expired', T0 + 5),
        ],
      ],
      now: T0,
      since: T0 - DAY,
      expect: { leaseExpiryRate: 0.25 },
    },
    {
      name: 'agents active in the last hour, not people or the scheduler',
      commits: [
        [ev('lease.granted', T0, { actor: 'agent:old' })],
        [
          ev('lease.granted', T0 + 3000_000, { actor: 'agent:b' }),
          ev('item.created', T0 + 3000_000, { actor: 'user:x' }),
          ev('lease.expired', T0 + 3000_000, { actor: 'system:lease-scheduler' }),
        ],
      ],
      now: T0 + 3700_000,
      since: T0 - DAY,
      expect: { agentsActiveLastHour: 1 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const board = boardWith(c.ready ?? {});
      let stats: BoardStats | undefined;
      for (const commit of c.commits) stats = foldStats(stats, commit, board);
      const metrics = metricsOf(stats, c.now, c.since);
      expect(metrics).toMatchObject(c.expect);
      if (c.name.startsWith('median'))
        expect(Math.abs(metrics.medianReadyToDoneSeconds! - 100) / 100).toBeLessThan(0.09);
    });
  }

  it('keeps at most 180 days, whatever the board size', () => {
    let stats: BoardStats | undefined;
    const board = boardWith({});
    for (let d = 0; d < 400; d++) stats = foldStats(stats, [done('W-1', T0 + d * DAY)], board);
    expect(Object.keys(stats!.days).length).toBeLessThanOrEqual(181);
  });
});

describe('the days a header keeps', () => {
  const day = (done: number) => ({ done, grants: 0, expiries: 0, verdicts: 0, passes: 0, readyToDone: {} });
  const stats: BoardStats = {
    days: { '2026-10-30': day(1), '2026-10-31': day(2), '2026-11-01': day(3) },
    active: { 'agent:a': T0 },
  };

  it('keeps the day of `now` and the one before; the days before those are closed', () => {
    const { kept, closed } = closedDays(stats, T0 + 5);
    expect(HEADER_DAYS).toBe(2);
    expect(Object.keys(kept.days)).toEqual(['2026-10-31', '2026-11-01']);
    expect(kept.active).toBe(stats.active);
    expect(closed).toEqual([['2026-10-30', day(1)]]);
    expect(closedDays(stats, T0 - DAY + 5)).toEqual({ kept: stats, closed: [] });
    expect(Object.keys(closedDays(stats, T0 + 3 * DAY).kept.days)).toEqual([]);
  });

  it('reads the archived days beside the header’s, the header’s winning a day in both', () => {
    const merged = withArchived({ days: { '2026-11-01': day(3) }, active: { 'agent:a': T0 } }, [
      ['2026-10-30', day(1)],
      ['2026-11-01', day(99)],
    ]);
    expect(merged).toEqual({ days: { '2026-10-30': day(1), '2026-11-01': day(3) }, active: { 'agent:a': T0 } });
    expect(withArchived(undefined, [['2026-10-30', day(1)]])).toEqual({ days: { '2026-10-30': day(1) }, active: {} });
  });
});

describe('the series by day', () => {
  const HOUR = 3600_000;
  const dayOn = (at: number) => new Date(at).toISOString().slice(0, 10);
  const fold = (commits: [StatEvent[], ReturnType<typeof boardWith>][]) =>
    commits.reduce<BoardStats | undefined>((stats, [events, board]) => foldStats(stats, events, board), undefined);
  const one = boardWith({ 'W-1': T0 });
  const three = boardWith({ 'W-1': T0, 'W-2': T0, 'W-3': T0 });
  const two = boardWith({ 'W-1': T0, 'W-2': T0 });

  it('keeps the counts as the day’s last commit left them, and carries them over a day without commits', () => {
    const stats = fold([
      [[ev('item.created', T0 + HOUR)], one],
      [[ev('item.created', T0 + 20 * HOUR)], three],
      [[ev('lease.granted', T0 + 2 * DAY + HOUR)], two],
    ]);
    expect(stats!.days['2026-11-01']!.counts).toEqual(countsByState(three));
    expect(countsByState(three)).toMatchObject({ done: 3, ready: 0 });
    const series = seriesOf(stats, T0 + 3 * DAY + HOUR, T0 - 7 * DAY);
    expect(series.map((d) => [d.day, d.counts?.done])).toEqual([
      ['2026-11-01', 3],
      ['2026-11-02', 3],
      ['2026-11-03', 2],
      ['2026-11-04', 2],
    ]);
  });

  it('counts the most agents active within the hour at any commit of the day, people and the scheduler aside', () => {
    const stats = fold([
      [[ev('lease.granted', T0, { actor: 'agent:a' })], one],
      [[ev('lease.granted', T0 + 10 * 60_000, { actor: 'agent:b' })], one],
      [
        [
          ev('lease.granted', T0 + 20 * 60_000, { actor: 'agent:c' }),
          ev('item.created', T0 + 20 * 60_000, { actor: 'user:x' }),
        ],
        one,
      ],
      [[ev('lease.granted', T0 + 2 * HOUR, { actor: 'agent:d' })], one], // a, b and c are an hour behind
      [[ev('lease.expired', T0 + DAY, { actor: 'system:lease-scheduler' })], one],
      [[ev('lease.granted', T0 + DAY + HOUR, { actor: 'agent:e' })], one],
    ]);
    expect(stats!.days['2026-11-01']!.agentsPeak).toBe(3);
    expect(stats!.days['2026-11-02']!.agentsPeak).toBe(1);
    expect(seriesOf(stats, T0 + DAY + HOUR, T0).map((d) => d.agentsActive)).toEqual([3, 1]);
  });

  it('reads the median and the 90th percentile of a day’s ready-to-done times (each within ~9%)', () => {
    const ready = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`W-${i + 1}`, T0]));
    const board = boardWith(ready);
    const times = (slow: number) =>
      Array.from({ length: 10 }, (_, i) => done(`W-${i + 1}`, T0 + (i < 10 - slow ? 10_000 : 1_000_000)));
    const near = (value: number | null, expected: number) => Math.abs(value! - expected) / expected < 0.09;
    const oneSlow = seriesOf(foldStats(undefined, times(1), board), T0, T0)[0]!.readyToDoneSeconds;
    expect(near(oneSlow.median, 10) && near(oneSlow.p90, 10)).toBe(true); // 9 of 10 took 10 s
    const twoSlow = seriesOf(foldStats(undefined, times(2), board), T0, T0)[0]!.readyToDoneSeconds;
    expect(near(twoSlow.median, 10) && near(twoSlow.p90, 1000)).toBe(true);
    expect(seriesOf(foldStats(undefined, [ev('lease.granted', T0)], board), T0, T0)[0]!.readyToDoneSeconds).toEqual({
      median: null,
      p90: null,
    });
  });

  it('fills the days without stats with zeros and nulls, through today, one entry per day', () => {
    const stats = fold([
      [[ev('lease.granted', T0), ev('lease.granted', T0), ev('lease.expired', T0), verdict('pass', T0)], one],
      [[verdict('pass', T0 + 3 * DAY), verdict('fail', T0 + 3 * DAY), done('W-1', T0 + 3 * DAY)], one],
    ]);
    const series = seriesOf(stats, T0 + 5 * DAY + HOUR, T0 - 30 * DAY);
    expect(series.map((d) => d.day)).toEqual([0, 1, 2, 3, 4, 5].map((n) => dayOn(T0 + n * DAY)));
    expect(series[0]).toMatchObject({ grants: 2, expiries: 1, verdicts: 1, passes: 1, done: 0 });
    expect(series[0]).toMatchObject({ verifyPassRate: 1, leaseExpiryRate: 0.5, agentsActive: 1 });
    expect(series[3]).toMatchObject({ done: 1, verdicts: 2, passes: 1, verifyPassRate: 0.5, leaseExpiryRate: null });
    const empty = {
      done: 0,
      grants: 0,
      expiries: 0,
      verdicts: 0,
      passes: 0,
      readyToDoneSeconds: { median: null, p90: null },
      verifyPassRate: null,
      leaseExpiryRate: null,
      agentsActive: 0,
      counts: countsByState(one),
    };
    for (const n of [1, 2, 4, 5]) expect(series[n]).toEqual({ day: dayOn(T0 + n * DAY), ...empty });
  });

  it('starts at the first day with stats, never before `since`; nothing without stats', () => {
    const stats = fold([
      [[done('W-1', T0)], one],
      [[done('W-1', T0 + 2 * DAY)], three],
      [[done('W-1', T0 + 4 * DAY)], two],
    ]);
    const from = (since: number) => seriesOf(stats, T0 + 5 * DAY, since).map((d) => d.day);
    expect(from(T0 - DAY)[0]).toBe('2026-11-01');
    expect(from(T0 + DAY + 5)).toEqual(['2026-11-03', '2026-11-04', '2026-11-05', '2026-11-06']);
    expect(from(T0 + 2 * DAY)).toEqual(['2026-11-03', '2026-11-04', '2026-11-05', '2026-11-06']);
    expect(from(T0 + 3 * DAY)).toEqual(['2026-11-05', '2026-11-06']);
    expect(seriesOf(stats, T0 + 5 * DAY, T0 + 5 * DAY + 5)).toEqual([]);
    expect(seriesOf(undefined, T0, T0 - DAY)).toEqual([]);
  });

  it('reads days folded before counts and peaks were kept as null counts and no agents', () => {
    const old: DayStats = { done: 2, grants: 2, expiries: 0, verdicts: 0, passes: 0, readyToDone: {} };
    const stats: BoardStats = {
      days: { '2026-11-01': old, '2026-11-03': { ...old, counts: { done: 4 } } },
      active: {},
    };
    expect(seriesOf(stats, T0 + 3 * DAY, T0).map((d) => [d.counts, d.agentsActive])).toEqual([
      [null, 0],
      [null, 0],
      [{ done: 4 }, 0],
      [{ done: 4 }, 0],
    ]);
    // The board as it stood before `since` still stands on the first day shown, until that day has its own.
    const before: BoardStats = {
      days: { '2026-11-01': { ...old, counts: { done: 1 } }, '2026-11-03': old },
      active: {},
    };
    expect(seriesOf(before, T0 + 2 * DAY, T0 + DAY).map((d) => [d.day, d.counts])).toEqual([
      ['2026-11-03', { done: 1 }],
    ]);
  });
});
