// A rewind applied through src/board/rewind.ts on a store, its swap decided as the board's actor
// would on a board held in memory: which restore points the apply keeps, and which it trims.
import { describe, expect, it } from 'vitest';
import {
  capturePoint,
  currentFingerprint,
  graphOfPoint,
  pointIdOf,
  POINTS_KEPT,
} from '../../src/board/restore-points.js';
import { purgeExpired } from '../../src/board/retention.js';
import { DAY_MS as DAY } from '../../src/plans.js';
import { Rewind } from '../../src/board/rewind.js';
import { rewindDecision, type RewindCommand } from '../../src/board/rewind-decision.js';
import type { BoardAccess, BoardCall } from '../../src/board/board-access.js';
import { addItems, BoardDraft, emptyBoard, type Board } from '../../machines/board.js';
import type { Committed } from '../../actors/board-actor.js';
import type { Store } from '../../store/ports/store.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { fields } from './build.js';

const NOW = Date.UTC(2026, 10, 22);
const ORIGIN = { requestId: 'r', address: '127.0.0.1' };

const committedAt = (lastSeq: number, board: Board = emptyBoard()): Committed => ({
  board,
  record: { _id: 'b', version: lastSeq + 1, nextWorkSeq: 1, nextFencingToken: 1, lastSeq, nextDeadline: null },
});

function boardOf(count: number): Board {
  const draft = new BoardDraft(emptyBoard());
  const items = Array.from({ length: count }, (_, i) => [`W-${i + 1}`, fields(`item ${i + 1}`)]);
  addItems(draft, Object.fromEntries(items), NOW);
  return draft.finish();
}

/** A Rewind whose board is `committed`, held here; each swap decided on it as the actor would, at `NOW + 5`. */
function rewinder(store: Store, boardId: string, committed: Committed) {
  let current = committed;
  const call = { boardId, principal: 'user:o', role: 'owner', within: null, actor: { read: async () => current } };
  let seq = committed.record.lastSeq;
  const boards = {
    ask: async (_call: BoardCall, command: RewindCommand) => {
      const decision = (await rewindDecision(store, command))(current.board, NOW + 5);
      current = { ...current, board: decision.board };
      const seqs = decision.events.map(() => ++seq);
      return decision.numbered ? decision.numbered(seqs) : decision.reply;
    },
  } as unknown as BoardAccess;
  return { rewind: new Rewind(store, boards, { error: () => {} }), call: call as unknown as BoardCall };
}

describe('a rewind applied on a store', () => {
  const used = useStore();

  it('applies the oldest point listed while the board holds the 500 it keeps, trimming only after the swap', async () => {
    const boardId = unique('b');
    for (let seq = 1; seq <= POINTS_KEPT; seq++)
      await capturePoint(used.store, boardId, committedAt(seq, boardOf(1)), 'batch', 'pro', NOW - 1000 + seq);
    const now = committedAt(600, boardOf(3));
    const { rewind, call } = rewinder(used.store, boardId, now);
    const oldest = (await rewind.preview(call, undefined)).points.at(-1)!.restorePointId;
    expect(oldest).toBe(pointIdOf(boardId, 1));

    const applied = await rewind.apply(
      call,
      { restorePointId: oldest, expectedFingerprint: currentFingerprint(now) },
      'pro',
      NOW,
      ORIGIN,
    );
    expect(applied).toMatchObject({ restorePointId: oldest, undoPointId: pointIdOf(boardId, 600) });
    const seqs = (await used.store.restorePoints.select({ boardId }, ['seq'], { sort: [['seq', 1]] })).map(
      (p) => p.seq,
    );
    expect(seqs).toHaveLength(POINTS_KEPT); // the applied point, the oldest, made room for the undo point
    expect([seqs[0], seqs.at(-1)]).toEqual([2, 600]);
  });
  it('keeps its undo point as a point of this rewind, for the whole retention, where an older one shares its seq', async () => {
    const boardId = unique('b');
    await used.store.projects.insert({
      _id: boardId,
      version: 1,
      name: boardId,
      ownerId: 'acc',
      plan: 'pro',
      createdAt: NOW - 200 * DAY,
      lastActivityAt: NOW,
    });
    // 179 days ago a move at seq 600 kept a point and was refused: nothing was committed since.
    const board = committedAt(600, boardOf(3));
    await capturePoint(used.store, boardId, committedAt(1), 'batch', 'pro', NOW - 179 * DAY);
    await capturePoint(used.store, boardId, board, 'state', 'pro', NOW - 179 * DAY);
    const { rewind, call } = rewinder(used.store, boardId, board);
    const input = { restorePointId: pointIdOf(boardId, 1), expectedFingerprint: currentFingerprint(board) };
    const { undoPointId } = await rewind.apply(call, input, 'pro', NOW, ORIGIN);
    expect(undoPointId).toBe(pointIdOf(boardId, 600));
    expect(await used.store.restorePoints.get(undoPointId)).toMatchObject({ reason: 'rewind', capturedAt: NOW });

    await purgeExpired(used.store, NOW + 2 * DAY);
    const undo = await used.store.restorePoints.get(undoPointId);
    expect(undo).toMatchObject({ reason: 'rewind' });
    expect(await graphOfPoint(used.store, undo!)).not.toBe('altered');
  });
});
