// Metrics as running aggregates: folded from commits' events, read as a table of cases.
import { describe, expect, it } from 'vitest';
import { BoardDraft, emptyBoard } from '../../machines/board.js';
import type { BoardItem } from '../../machines/board-item.js';
import {
  closedDays,
  foldStats,
  HEADER_DAYS,
  metricsOf,
  withArchived,
  type BoardStats,
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
