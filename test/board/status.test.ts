// The status snapshot as a pure function of the committed board, and where its last activity is read.
import { describe, expect, it } from 'vitest';
import { lastActivityOf, statusJson, statusOf } from '../../src/board/status.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { boardWith } from './build.js';

const NOW = Date.UTC(2026, 10, 22, 12);

describe('statusOf', () => {
  it('snapshots the board with the agents online and the last activity', () => {
    const board = boardWith(NOW, 3, 2, 1);
    const status = statusOf({
      projectId: 'p',
      name: 'Board',
      board,
      record: { version: 7, lastSeq: 9 },
      agentsOnline: 2,
      lastActivityAt: NOW - 5000,
    });
    expect(status).toMatchObject({
      projectId: 'p',
      name: 'Board',
      version: 7,
      lastSeq: 9,
      counts: { ready: 1, claimed: 1, done: 1 },
      chainHead: [{ workId: 'W-3', title: 'item 3', priority: 2 }],
      leases: [{ workId: 'W-2', holder: 'agent:a', purpose: 'work', expiresAt: new Date(NOW + 60_000).toISOString() }],
      awaitingVerification: [],
      stalled: [],
      agentsOnline: 2,
      lastActivityAt: new Date(NOW - 5000).toISOString(),
    });
    expect(
      statusOf({
        projectId: 'p',
        name: 'B',
        board,
        record: { version: 1, lastSeq: 0 },
        agentsOnline: 0,
        lastActivityAt: null,
      }).lastActivityAt,
    ).toBeNull();
  });
});

describe('statusJson', () => {
  it('is statusOf as JSON, key for key, with the version’s part built once per committed record and the whole body kept for the next request alike', () => {
    const board = boardWith(NOW, 3, 2, 1);
    const record = { version: 7, lastSeq: 9 };
    const input = {
      projectId: 'p',
      name: 'Board "one" — ✓',
      board,
      record,
      agentsOnline: 2,
      lastActivityAt: NOW - 5000,
    };
    expect(statusJson(input).toString()).toBe(JSON.stringify(statusOf(input)));
    expect(statusJson({ ...input })).toBe(statusJson(input)); // the same request again: the same bytes, not built anew
    expect(statusJson({ ...input, agentsOnline: 3 }).toString()).toBe(
      JSON.stringify(statusOf({ ...input, agentsOnline: 3 })),
    );
    // The name and the agents online are the request's; the rest is the record's.
    const renamed = { ...input, name: 'Two', agentsOnline: 0, lastActivityAt: null };
    expect(statusJson(renamed).toString()).toBe(JSON.stringify(statusOf(renamed)));
    const later = boardWith(NOW, 5, 0, 0);
    expect(statusJson({ ...input, board: later }).toString()).toBe(JSON.stringify(statusOf(input))); // same record: built once
    expect(statusJson({ ...input, board: later, record: { version: 8, lastSeq: 10 } }).toString()).toBe(
      JSON.stringify(statusOf({ ...input, board: later, record: { version: 8, lastSeq: 10 } })),
    );
  });
});

describe('lastActivityOf', () => {
  const used = useStore();

  const event = (boardId: string, seq: number, at: number) => ({
    _id: `${boardId}:${seq}`,
    boardId,
    seq,
    type: 'item.created',
    actor: 'user:o',
    workId: `W-${seq}`,
    at,
    data: {},
  });

  it('is null before the first event, the held outbox’s newest, else the log’s event at lastSeq', async () => {
    const boardId = unique('board');
    expect(await lastActivityOf(used.store, boardId, { record: { lastSeq: 0, outbox: [] } })).toBeNull();
    expect(
      await lastActivityOf(used.store, boardId, {
        record: { lastSeq: 2, outbox: [event(boardId, 1, NOW - 10), event(boardId, 2, NOW - 5)] },
      }),
    ).toBe(NOW - 5);
    await used.store.events.insertMissing(
      [event(boardId, 1, NOW - 10), event(boardId, 2, NOW - 5), event(boardId, 3, NOW - 1)].map((e) => ({
        ...e,
        version: 1,
      })),
    );
    expect(await lastActivityOf(used.store, boardId, { record: { lastSeq: 3, outbox: [] } })).toBe(NOW - 1);
    expect(await lastActivityOf(used.store, boardId, { record: { lastSeq: 3 } })).toBe(NOW - 1);
    expect(await lastActivityOf(used.store, boardId, { record: { lastSeq: 3 }, newest: null })).toBe(NOW - 1);
  });

  it('takes the newest event the actor holds beside a header without its outbox, and reads the log when it is older', async () => {
    const boardId = unique('board');
    // Seq 4 is in no log: only the held newest can answer.
    expect(await lastActivityOf(used.store, boardId, { record: { lastSeq: 4 }, newest: { seq: 4, at: NOW - 2 } })).toBe(
      NOW - 2,
    );
    // The held newest wins over an outbox the header still has.
    expect(
      await lastActivityOf(used.store, boardId, {
        record: { lastSeq: 4, outbox: [event(boardId, 4, NOW - 9)] },
        newest: { seq: 4, at: NOW - 2 },
      }),
    ).toBe(NOW - 2);
    await used.store.events.insertMissing([{ ...event(boardId, 5, NOW - 1), version: 1 }]);
    expect(await lastActivityOf(used.store, boardId, { record: { lastSeq: 5 }, newest: { seq: 4, at: NOW - 2 } })).toBe(
      NOW - 1,
    );
  });
});
