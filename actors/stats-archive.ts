// A board's finished days of stats, kept apart from its header (machines/board-stats.ts
// closedDays): written before the commit that drops them from the header, so a day is always in
// one or the other, and read beside the header's by whoever reports them.
import type { DayStats } from '../machines/board-stats.js';
import type { BoardStatsDayRecord, Store } from '../store/ports/store.js';

export type StatsArchivePorts = Pick<Store, 'boardStatsDays'>;

const idOf = (boardId: string, day: string): string => `${boardId}:${day}`;

/**
 * Archives `days` as the header at `fromVersion` had them, and drops archived days before
 * `oldestDay`. A day archived already from a later header version stays as it is; one from an
 * earlier version (a writer whose commit was then refused: its header was stale) is replaced.
 */
export async function archiveDays(
  ports: StatsArchivePorts,
  boardId: string,
  days: readonly [string, DayStats][],
  fromVersion: number,
  oldestDay: string,
): Promise<void> {
  const archive = ports.boardStatsDays;
  const records = new Map(
    days.map(([day, stats]) => [
      idOf(boardId, day),
      {
        _id: idOf(boardId, day),
        version: 1,
        boardId,
        day,
        stats: stats as unknown as Record<string, unknown>,
        fromVersion,
      },
    ]),
  );
  await archive.insertMissing([...records.values()]);
  for (const held of await archive.find({ _id: { $in: [...records.keys()] } })) {
    let current: BoardStatsDayRecord | null = held;
    // Another writer may replace it meanwhile: the later header version wins either way.
    for (let tries = 0; current && current.fromVersion < fromVersion && tries < 3; tries++) {
      const { stats } = records.get(current._id)!;
      if (await archive.update(current._id, current.version, { stats, fromVersion })) break;
      current = await archive.get(current._id);
    }
  }
  await archive.deleteMany({ boardId, day: { $lt: oldestDay } });
}

/** The board's archived days from `firstDay` on (all of them without it), oldest first. */
export async function archivedDays(
  ports: StatsArchivePorts,
  boardId: string,
  firstDay?: string,
): Promise<[string, DayStats][]> {
  const found = await ports.boardStatsDays.find(
    firstDay === undefined ? { boardId } : { boardId, day: { $gte: firstDay } },
    { sort: [['day', 1]] },
  );
  return found.map((r) => [r.day, r.stats as unknown as DayStats]);
}
