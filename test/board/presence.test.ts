// Presence: heartbeats recorded one row per agent, agents online within 120 s, and the roster as
// a table of (rows seen, leases held, time) -> entries.
import { describe, expect, it } from 'vitest';
import { emptyBoard, type Board } from '../../machines/board.js';
import {
  agentsOnline,
  ONLINE_COUNT_FRESH_MS,
  OnlineCounts,
  ONLINE_WITHIN_MS,
  recordHeartbeat,
  rosterOf,
  seenOn,
  type RosterEntry,
} from '../../src/board/presence.js';
import type { PresenceRecord } from '../../store/ports/store.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { boardWith } from './build.js';

const NOW = Date.UTC(2026, 10, 22, 12);
const seen = (principal: string, ago: number, over: Partial<PresenceRecord> = {}): PresenceRecord => ({
  _id: `b|${principal}`,
  version: 1,
  boardId: 'b',
  principal,
  status: 'working',
  note: '',
  workId: null,
  seenAt: NOW - ago,
  ...over,
});
const iso = (ago: number) => new Date(NOW - ago).toISOString();

describe('rosterOf', () => {
  const cases: { name: string; seen: PresenceRecord[]; board: Board; expect: RosterEntry[] }[] = [
    { name: 'nobody', seen: [], board: emptyBoard(), expect: [] },
    {
      name: 'online until 120 s after the last heartbeat',
      seen: [
        seen('agent:a', 0, { note: 'on it', workId: 'W-1' }),
        seen('agent:b', ONLINE_WITHIN_MS - 1, { status: 'idle' }),
        seen('agent:c', ONLINE_WITHIN_MS),
      ],
      board: emptyBoard(),
      expect: [
        {
          principal: 'agent:a',
          status: 'working',
          note: 'on it',
          workId: 'W-1',
          lastSeenAt: iso(0),
          online: true,
          leases: [],
        },
        {
          principal: 'agent:b',
          status: 'idle',
          note: '',
          workId: null,
          lastSeenAt: iso(ONLINE_WITHIN_MS - 1),
          online: true,
          leases: [],
        },
        {
          principal: 'agent:c',
          status: 'working',
          note: '',
          workId: null,
          lastSeenAt: iso(ONLINE_WITHIN_MS),
          online: false,
          leases: [],
        },
      ],
    },
    {
      name: 'leases held, also by an agent never seen',
      seen: [seen('agent:b', 1000)],
      board: boardWith(NOW, 3, 2),
      expect: [
        {
          principal: 'agent:b',
          status: 'working',
          note: '',
          workId: null,
          lastSeenAt: iso(1000),
          online: true,
          leases: [],
        },
        {
          principal: 'agent:a',
          status: null,
          note: null,
          workId: null,
          lastSeenAt: null,
          online: false,
          leases: ['W-1', 'W-2'],
        },
      ],
    },
  ];
  it.each(cases)('$name', ({ seen, board, expect: expected }) => {
    expect(rosterOf(seen, board, NOW)).toEqual(expected);
  });
});

describe('heartbeats on a store', () => {
  const used = useStore();

  it('keeps one row per agent, the latest heartbeat, and counts who is online', async () => {
    const board = unique('board');
    await recordHeartbeat(
      used.store,
      board,
      'agent:a',
      { status: 'idle', note: 'waiting', workId: null },
      NOW - 200_000,
    );
    await recordHeartbeat(used.store, board, 'agent:b', { status: 'working', note: '', workId: 'W-2' }, NOW - 60_000);
    await recordHeartbeat(
      used.store,
      board,
      'agent:a',
      { status: 'working', note: 'reading', workId: 'W-1' },
      NOW - 1000,
    );
    await recordHeartbeat(used.store, unique('other'), 'agent:c', { status: 'working', note: '', workId: null }, NOW);
    const rows = await seenOn(used.store, board);
    expect(rows.map((r) => [r.principal, r.status, r.note, r.workId, r.seenAt])).toEqual([
      ['agent:a', 'working', 'reading', 'W-1', NOW - 1000],
      ['agent:b', 'working', '', 'W-2', NOW - 60_000],
    ]);
    expect(await agentsOnline(used.store, board, NOW)).toBe(2);
    expect(await agentsOnline(used.store, board, NOW + 60_000)).toBe(1);
    expect(await agentsOnline(used.store, board, NOW + ONLINE_WITHIN_MS)).toBe(0);
  });

  it('counts agents online at most once a second per board, and afresh at once after a heartbeat is heard', async () => {
    const board = unique('board');
    const counts = new OnlineCounts(used.store);
    await recordHeartbeat(used.store, board, 'agent:a', { status: 'idle', note: '', workId: null }, NOW);
    expect(await counts.count(board, NOW)).toBe(1);
    await recordHeartbeat(used.store, board, 'agent:b', { status: 'idle', note: '', workId: null }, NOW + 10);
    expect(await counts.count(board, NOW + 500)).toBe(1); // unheard: the count of a moment ago
    counts.heard(board);
    expect(await counts.count(board, NOW + 500)).toBe(2);
    await recordHeartbeat(used.store, board, 'agent:c', { status: 'idle', note: '', workId: null }, NOW + 20);
    expect(await counts.count(board, NOW + 1499)).toBe(2);
    expect(await counts.count(board, NOW + 500 + ONLINE_COUNT_FRESH_MS)).toBe(3); // a second on, counted again
    expect(await counts.count(board, NOW + ONLINE_WITHIN_MS + 15)).toBe(1); // a and b went quiet
  });

  it('records concurrent first heartbeats of one agent once', async () => {
    const board = unique('board');
    await Promise.all(
      [1, 2, 3].map((i) =>
        recordHeartbeat(used.store, board, 'agent:a', { status: 'working', note: `n${i}`, workId: null }, NOW + i),
      ),
    );
    const rows = await seenOn(used.store, board);
    expect(rows).toHaveLength(1);
  });
});
