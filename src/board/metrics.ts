// The board's metrics as one pure function of the board, its running stats, its plan and the time:
// counts by state now, and the aggregates over the plan's history retention.
import { countsByState, type Board } from '../../machines/board.js';
import { dayOf, metricsOf, withArchived, type BoardStats, type Metrics } from '../../machines/board-stats.js';
import { archivedDays, type StatsArchivePorts } from '../../actors/stats-archive.js';
import { historySince, type PlanName } from '../plans.js';

export interface BoardMetrics extends Metrics {
  counts: Record<string, number>;
}

/** What GET /api/metrics answers: counts by state, then the stats from the plan's retention on. */
export function boardMetrics(board: Board, stats: BoardStats | undefined, plan: PlanName, now: number): BoardMetrics {
  return { counts: countsByState(board), ...metricsOf(stats, now, historySince(plan, now)) };
}

/** The header's stats with the archived days from `since` on (the days a board's header no longer keeps). */
export async function statsSince(
  ports: StatsArchivePorts,
  boardId: string,
  stats: BoardStats | undefined,
  since?: number,
): Promise<BoardStats> {
  return withArchived(stats, await archivedDays(ports, boardId, since === undefined ? undefined : dayOf(since)));
}
