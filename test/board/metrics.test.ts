// GET /api/metrics as one pure function: counts by state now, aggregates within the plan's retention.
import { describe, expect, it } from 'vitest';
import { emptyBoard, type Board } from '../../machines/board.js';
import { emptyStats, type BoardStats, type DayStats } from '../../machines/board-stats.js';
import { boardMetrics, type BoardMetrics } from '../../src/board/metrics.js';
import type { PlanName } from '../../src/plans.js';
import { boardWith } from './build.js';

const NOW = Date.UTC(2026, 10, 22, 12);
const DAY = 86_400_000;
const day = (over: Partial<DayStats>): DayStats => ({
  done: 0,
  grants: 0,
  expiries: 0,
  verdicts: 0,
  passes: 0,
  readyToDone: {},
  ...over,
});
const ZERO = { pending: 0, ready: 0, claimed: 0, awaiting_verify: 0, verifying: 0, done: 0, blocked: 0, cancelled: 0 };
const stats: BoardStats = {
  days: {
    '2026-11-02': day({ done: 4, grants: 4, expiries: 4, verdicts: 2, passes: 0 }),
    '2026-11-19': day({ done: 1, grants: 2, expiries: 1, verdicts: 2, passes: 1, readyToDone: { '24': 1 } }),
    '2026-11-22': day({ done: 2, grants: 2, verdicts: 2, passes: 2 }),
  },
  active: { 'agent:a': NOW - 10 * 60_000, 'agent:b': NOW - 59 * 60_000, 'agent:c': NOW - 61 * 60_000 },
};

const cases: {
  name: string;
  board: Board;
  stats: BoardStats | undefined;
  plan: PlanName;
  expect: Partial<BoardMetrics>;
}[] = [
  {
    name: 'a new board',
    board: emptyBoard(),
    stats: undefined,
    plan: 'free',
    expect: {
      counts: ZERO,
      throughputPerDay: [],
      medianReadyToDoneSeconds: null,
      verifyPassRate: null,
      leaseExpiryRate: null,
      agentsActiveLastHour: 0,
    },
  },
  {
    name: 'counts come from the board as it is now',
    board: boardWith(NOW, 4, 2, 1),
    stats: emptyStats(),
    plan: 'free',
    expect: { counts: { ...ZERO, ready: 2, claimed: 1, done: 1 } },
  },
  {
    name: 'free keeps 7 days of aggregates',
    board: emptyBoard(),
    stats,
    plan: 'free',
    expect: {
      throughputPerDay: [
        { day: '2026-11-19', done: 1 },
        { day: '2026-11-22', done: 2 },
      ],
      verifyPassRate: 0.75,
      leaseExpiryRate: 0.25,
      medianReadyToDoneSeconds: 69.1,
      agentsActiveLastHour: 2,
    },
  },
  {
    name: 'pro keeps 180 days',
    board: emptyBoard(),
    stats,
    plan: 'pro',
    expect: {
      throughputPerDay: [
        { day: '2026-11-02', done: 4 },
        { day: '2026-11-19', done: 1 },
        { day: '2026-11-22', done: 2 },
      ],
      verifyPassRate: 0.5,
      leaseExpiryRate: 0.625,
    },
  },
];

describe('boardMetrics', () => {
  it.each(cases)('$name', ({ board, stats, plan, expect: expected }) => {
    expect(boardMetrics(board, stats, plan, NOW)).toMatchObject(expected);
  });

  it('ages a day out of the free window at midnight UTC, seven days on', () => {
    const later = NOW + 4 * DAY; // 2026-11-26: the window starts on the 19th
    expect(boardMetrics(emptyBoard(), stats, 'free', later).throughputPerDay.map((d) => d.day)).toEqual([
      '2026-11-19',
      '2026-11-22',
    ]);
    expect(boardMetrics(emptyBoard(), stats, 'free', later + DAY).throughputPerDay.map((d) => d.day)).toEqual([
      '2026-11-22',
    ]);
  });
});
