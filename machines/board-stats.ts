// The board's metrics as running aggregates, folded from each commit's events (never by reading
// the log back): per day, items done, leases granted and expired, verdicts and passes, a histogram
// of ready-to-done times, doctrine blind tests passed and failed, the items per state at the day's
// end and the most agents active at once; and when each agent last acted. Kept with the board,
// bounded by days and active agents, not by the board's size. Pure: time arrives with the events.
import type { Board } from './board.js';
import { countsByState } from './board-queries.js';

export const STATS_DAYS_KEPT = 180;
export const ACTIVE_WINDOW_MS = 3600_000;
/** Ready-to-done times go in buckets a quarter of an octave wide (the median is within ~9%). */
const BUCKETS_PER_OCTAVE = 4;

export interface DayStats {
  done: number;
  grants: number;
  expiries: number;
  verdicts: number;
  passes: number;
  /** Bucket index → how many ready-to-done times fell in it (bucket b starts at 2^(b/4) - 1 s). */
  readyToDone: Record<string, number>;
  /** Doctrine blind tests that passed and failed; absent on a day without any. */
  blindPasses?: number;
  blindFails?: number;
  /** Items per state after the day's last commit; absent on days folded before it was kept. */
  counts?: Record<string, number>;
  /** The most agents active within ACTIVE_WINDOW_MS at any commit that day; absent likewise. */
  agentsPeak?: number;
}

export interface BoardStats {
  /** By UTC day, `YYYY-MM-DD`. */
  days: Record<string, DayStats>;
  /** Agent principal → when it last acted. */
  active: Record<string, number>;
}

export interface StatEvent {
  type: string;
  actor: string;
  workId: string | null;
  at: number;
  data: Record<string, unknown>;
}

export interface Metrics {
  throughputPerDay: { day: string; done: number }[];
  medianReadyToDoneSeconds: number | null;
  verifyPassRate: number | null;
  leaseExpiryRate: number | null;
  agentsActiveLastHour: number;
  /** Doctrine blind tests over the same days, by result. */
  blindTests: { pass: number; fail: number };
}

/** One UTC day of a board's series (seriesOf): a day without stats reads as zeros, its counts carried. */
export interface SeriesDay {
  day: string;
  done: number;
  grants: number;
  expiries: number;
  verdicts: number;
  passes: number;
  readyToDoneSeconds: { median: number | null; p90: number | null };
  verifyPassRate: number | null;
  leaseExpiryRate: number | null;
  agentsActive: number;
  counts: Record<string, number> | null;
}

export const emptyStats = (): BoardStats => ({ days: {}, active: {} });

const DAY_MS = 86_400_000;

export const dayOf = (at: number): string => new Date(at).toISOString().slice(0, 10);
/** The first day of the STATS_DAYS_KEPT a board keeps, as of `at`: the header's and the archive's. */
export const oldestDayKept = (at: number): string => dayOf(at - STATS_DAYS_KEPT * DAY_MS);
const bucketOf = (seconds: number): number => Math.floor(Math.log2(1 + Math.max(0, seconds)) * BUCKETS_PER_OCTAVE);
const bucketMiddle = (bucket: number): number =>
  (2 ** (bucket / BUCKETS_PER_OCTAVE) + 2 ** ((bucket + 1) / BUCKETS_PER_OCTAVE)) / 2 - 1;

/**
 * The stats after `events` (one commit's, in order) on the board they produced. An item reaching
 * done counts the time since it last became ready (its `readyAt`), when known; a rewind's moves
 * (`data.rewound`) count as nothing done.
 */
export function foldStats(stats: BoardStats | undefined, events: readonly StatEvent[], board: Board): BoardStats {
  const days = { ...(stats?.days ?? {}) };
  const active = { ...(stats?.active ?? {}) };
  const touched = new Map<string, DayStats>();
  const day = (at: number): DayStats => {
    const key = dayOf(at);
    let d = touched.get(key);
    if (!d) {
      const was = days[key];
      d = was
        ? { ...was, readyToDone: { ...was.readyToDone } }
        : { done: 0, grants: 0, expiries: 0, verdicts: 0, passes: 0, readyToDone: {} };
      touched.set(key, d);
      days[key] = d;
    }
    return d;
  };
  let latest = 0;
  for (const e of events) {
    latest = Math.max(latest, e.at);
    if (e.actor.startsWith('agent:')) active[e.actor] = e.at;
    if (e.type === 'lease.granted') day(e.at).grants++;
    if (e.type === 'lease.expired') day(e.at).expiries++;
    if (e.type === 'item.verified') {
      const d = day(e.at);
      d.verdicts++;
      if ((e.data.verification as { verdict?: string } | undefined)?.verdict === 'pass') d.passes++;
    }
    if (e.type === 'doctrine.blind_test') {
      const d = day(e.at);
      if (e.data.result === 'pass') d.blindPasses = (d.blindPasses ?? 0) + 1;
      else d.blindFails = (d.blindFails ?? 0) + 1;
    }
    // A rewind putting an item back as done (`data.rewound`) finished nothing.
    if (e.type === 'item.state' && e.data.to === 'done' && e.data.rewound !== true) {
      const d = day(e.at);
      d.done++;
      const readyAt = e.workId ? board.items.get(e.workId)?.readyAt : undefined;
      if (typeof readyAt === 'number') {
        const bucket = String(bucketOf((e.at - readyAt) / 1000));
        d.readyToDone[bucket] = (d.readyToDone[bucket] ?? 0) + 1;
      }
    }
  }
  if (!events.length) return stats ?? emptyStats();
  const oldestDay = oldestDayKept(latest);
  for (const key of Object.keys(days)) if (key < oldestDay) delete days[key];
  for (const [principal, at] of Object.entries(active)) if (latest - at >= ACTIVE_WINDOW_MS) delete active[principal];
  // The board as this commit left it: the day's last commit leaves the day's end.
  const today = day(latest);
  today.counts = countsByState(board);
  today.agentsPeak = Math.max(today.agentsPeak ?? 0, Object.keys(active).length);
  return { days, active };
}

/** The days a header keeps: `now`'s and the one before (a day of slack for clocks that disagree). No event changes the days before those. */
export const HEADER_DAYS = 2;

/**
 * The stats a board's header keeps (the last HEADER_DAYS days, and the agents active), and the
 * days before them, finished, which go to an archive of their own: the header is written whole on
 * every commit, so it must not grow with the board's age (180 days of stats are about 35 KB, and
 * each day's end counts by state add about 120 bytes a day).
 */
export function closedDays(stats: BoardStats, now: number): { kept: BoardStats; closed: [string, DayStats][] } {
  const firstOpen = dayOf(now - (HEADER_DAYS - 1) * DAY_MS);
  const closed = Object.entries(stats.days).filter(([day]) => day < firstOpen);
  if (!closed.length) return { kept: stats, closed };
  return {
    kept: {
      days: Object.fromEntries(Object.entries(stats.days).filter(([day]) => day >= firstOpen)),
      active: stats.active,
    },
    closed,
  };
}

/** The header's stats with the archived days beside them (a day in both: the header's). */
export const withArchived = (stats: BoardStats | undefined, archived: Iterable<[string, DayStats]>): BoardStats => {
  const days: Record<string, DayStats> = {};
  for (const [day, d] of archived) days[day] = d;
  return { days: { ...days, ...(stats?.days ?? {}) }, active: stats?.active ?? {} };
};

/** The metrics from the stats: days from `since` on, agents active in the hour before `now`. */
export function metricsOf(stats: BoardStats | undefined, now: number, since: number): Metrics {
  const first = dayOf(since);
  const days = Object.entries(stats?.days ?? {})
    .filter(([day]) => day >= first)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const sum = (f: (d: DayStats) => number) => days.reduce((n, [, d]) => n + f(d), 0);
  const histogram = new Map<number, number>();
  for (const [, d] of days)
    for (const [b, n] of Object.entries(d.readyToDone)) histogram.set(Number(b), (histogram.get(Number(b)) ?? 0) + n);
  const verdicts = sum((d) => d.verdicts);
  const grants = sum((d) => d.grants);
  return {
    throughputPerDay: days.filter(([, d]) => d.done > 0).map(([day, d]) => ({ day, done: d.done })),
    medianReadyToDoneSeconds: percentileOf(histogram, 50),
    verifyPassRate: verdicts ? sum((d) => d.passes) / verdicts : null,
    leaseExpiryRate: grants ? sum((d) => d.expiries) / grants : null,
    agentsActiveLastHour: Object.values(stats?.active ?? {}).filter((at) => now - at < ACTIVE_WINDOW_MS).length,
    blindTests: { pass: sum((d) => d.blindPasses ?? 0), fail: sum((d) => d.blindFails ?? 0) },
  };
}

/**
 * The board's days one by one, from the first with stats (not before `since`) through `now`'s (or
 * a later day a clock ahead wrote): a day without stats reads as zeros and nulls, and its counts
 * are the day before's (null until a day has them).
 */
export function seriesOf(stats: BoardStats | undefined, now: number, since: number): SeriesDay[] {
  const all = stats?.days ?? {};
  const held = Object.keys(all).sort();
  const first = held.find((day) => day >= dayOf(since));
  if (first === undefined) return [];
  let counts: Record<string, number> | null = null;
  for (const day of held) if (day < first) counts = all[day]!.counts ?? counts;
  const last = [dayOf(now), held.at(-1)!].sort().at(-1)!;
  const series: SeriesDay[] = [];
  for (let at = Date.parse(first), day = first; day <= last; at += DAY_MS, day = dayOf(at)) {
    const d = all[day];
    counts = d?.counts ?? counts;
    const histogram = new Map(Object.entries(d?.readyToDone ?? {}).map(([b, n]) => [Number(b), n]));
    series.push({
      day,
      done: d?.done ?? 0,
      grants: d?.grants ?? 0,
      expiries: d?.expiries ?? 0,
      verdicts: d?.verdicts ?? 0,
      passes: d?.passes ?? 0,
      readyToDoneSeconds: { median: percentileOf(histogram, 50), p90: percentileOf(histogram, 90) },
      verifyPassRate: d?.verdicts ? d.passes / d.verdicts : null,
      leaseExpiryRate: d?.grants ? d.expiries / d.grants : null,
      agentsActive: d?.agentsPeak ?? 0,
      counts,
    });
  }
  return series;
}

/** The middle of the bucket holding the `percent`th percentile of the times (within ~9%), or null without any. */
function percentileOf(histogram: Map<number, number>, percent: number): number | null {
  const total = [...histogram.values()].reduce((a, b) => a + b, 0);
  if (!total) return null;
  let seen = 0;
  for (const bucket of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(bucket)!;
    if (seen * 100 >= total * percent) return Math.round(bucketMiddle(bucket) * 10) / 10;
  }
  return null;
}
