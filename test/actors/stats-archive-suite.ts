import { newBoardRecord } from '../../store/ports/store.js';
// The suite of stats-archive.test.ts and stats-archive.mongo.test.ts: a board's finished days of
// stats move from its header to an archive of their own, before the commit that drops them; a
// writer whose header was stale never leaves its days in place of later ones; the metrics read
// both (actors/stats-archive.ts, machines/board-stats.ts).
import { afterEach, beforeEach, expect, it } from 'vitest';
import { BoardActor } from '../../actors/board-actor.js';
import { archiveDays, archivedDays } from '../../actors/stats-archive.js';
import { createItems, type NewItem } from '../../machines/board-commands.js';
import { claim } from '../../machines/lease-commands.js';
import type { BoardStats, DayStats } from '../../machines/board-stats.js';
import { statsSince } from '../../src/board/metrics.js';
import { deleteProject } from '../../src/accounts/projects.js';
import type { Store } from '../../store/ports/store.js';
import type { OpenedStore } from '../support/stores.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 12);
const item = (title: string): NewItem => ({
  title,
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
});
const stats = (grants: number): DayStats => ({ done: 0, grants, expiries: 0, verdicts: 0, passes: 0, readyToDone: {} });

/** The suite on a store of `open`. */
export function statsByDay(open: () => Promise<OpenedStore>): void {
  let opened: OpenedStore;
  let store: Store;
  beforeEach(async () => {
    opened = await open();
    store = opened.store;
    await store.boards.insert(newBoardRecord('b'));
  });
  afterEach(async () => {
    await store.close();
    await opened.drop();
  });

  it('keeps the last two days in the header and moves each earlier day to the archive, losing no count', async () => {
    let now = T0;
    const actor = new BoardActor('b', store, () => now);
    await actor.ask(createItems([item('1'), item('2'), item('3'), item('4')], 'user:a'));
    for (const [day, n] of [
      [0, 1],
      [1, 2],
      [2, 3],
    ] as const) {
      now = T0 + day * DAY;
      for (let i = 0; i < n - (day === 2 ? 2 : 0); i++)
        await actor.ask(
          claim({
            principal: `agent:${day}-${i}`,
            workId: null,
            purpose: 'work',
            ttlMs: 3 * DAY,
            leaseId: `L${day}-${i}`,
          }),
        );
    }
    const header = (await store.boards.get('b'))!.stats as unknown as BoardStats;
    expect(Object.keys(header.days)).toEqual(['2026-11-02', '2026-11-03']);
    // The day's end as its last commit left it (one of four items claimed), one agent at most.
    const dayEnd = { counts: expect.objectContaining({ ready: 3, claimed: 1 }), agentsPeak: 1 };
    expect(await archivedDays(store, 'b')).toEqual([['2026-11-01', { ...stats(1), ...dayEnd }]]);
    const all = await statsSince(store, 'b', header);
    expect(Object.fromEntries(Object.entries(all.days).map(([d, s]) => [d, s.grants]))).toEqual({
      '2026-11-01': 1,
      '2026-11-02': 2,
      '2026-11-03': 1,
    });
    // From a day on: the archived days before it are left out.
    expect(Object.keys((await statsSince(store, 'b', header, T0 + DAY)).days)).toEqual(['2026-11-02', '2026-11-03']);
    await deleteProject(store, 'b');
    expect(await archivedDays(store, 'b')).toEqual([]);
  });

  it('keeps a day archived from a later header version, replaces one from an earlier, and drops days past the oldest kept', async () => {
    await archiveDays(
      store,
      'b',
      [
        ['2026-05-01', stats(7)],
        ['2026-11-01', stats(5)],
      ],
      10,
      '2026-01-01',
    );
    await archiveDays(store, 'b', [['2026-11-01', stats(4)]], 9, '2026-01-01'); // a stale writer: its commit is refused after this
    expect(await archivedDays(store, 'b')).toEqual([
      ['2026-05-01', stats(7)],
      ['2026-11-01', stats(5)],
    ]);
    await archiveDays(store, 'b', [['2026-11-01', stats(6)]], 11, '2026-06-01');
    expect(await archivedDays(store, 'b')).toEqual([['2026-11-01', stats(6)]]);
    expect((await store.boardStatsDays.get('b:2026-11-01'))!.fromVersion).toBe(11);
  });
}
