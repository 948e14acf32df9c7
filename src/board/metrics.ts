// The board's metrics as one pure function of the board, its running stats, its plan and the time:
// counts by state now, the aggregates over the plan's history retention, and the same days one by one.
import type { Board } from '../../machines/board.js';
import { countsByState } from '../../machines/board-queries.js';
import {
  dayOf,
  metricsOf,
  seriesOf,
  withArchived,
  type BoardStats,
  type Metrics,
  type SeriesDay,
} from '../../machines/board-stats.js';
import { archivedDays, type StatsArchivePorts } from '../../actors/stats-archive.js';
import { historySince, type PlanName } from '../plans.js';

export interface BoardMetrics extends Metrics {
  counts: Record<string, number>;
  /** Per UTC day, oldest first, every day from the first with stats within the retention through today. */
  days: SeriesDay[];
}

/** What GET /api/metrics answers: counts by state, then the stats from the plan's retention on, in sum and by day. */
export function boardMetrics(board: Board, stats: BoardStats | undefined, plan: PlanName, now: number): BoardMetrics {
  const since = historySince(plan, now);
  return { counts: countsByState(board), ...metricsOf(stats, now, since), days: seriesOf(stats, now, since) };
}

/**
 * The header's stats with the archived days from `since` on (the days a board's header no longer
 * keeps): one read of the archive, on its index by board and day.
 */
export async function statsSince(
  ports: StatsArchivePorts,
  boardId: string,
  stats: BoardStats | undefined,
  since?: number,
): Promise<BoardStats> {
  return withArchived(stats, await archivedDays(ports, boardId, since === undefined ? undefined : dayOf(since)));
}
