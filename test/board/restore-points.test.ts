// Restore points kept on a store: one per board seq, the newest 500 at most, and for a plan
// without rewind the newest 20 of the last day.
import { describe, expect, it } from 'vitest';
import {
  captureBefore,
  capturePoint,
  captureQuiet,
  fingerprintOf,
  graphOfPoint,
  PART_CHARS,
  POINTS_KEPT,
} from '../../src/board/restore-points.js';
import { FREE_POINTS } from '../../src/plans.js';
import { addItems, BoardDraft, emptyBoard } from '../../machines/board.js';
import { canonicalJson } from '../../machines/restore-point.js';
import type { Committed } from '../../actors/board-actor.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { fields } from './build.js';

const NOW = Date.UTC(2026, 10, 22);
const committedAt = (lastSeq: number, board = emptyBoard()): Committed => ({
  board,
  record: { _id: 'b', version: lastSeq + 1, nextWorkSeq: 1, nextFencingToken: 1, lastSeq, nextDeadline: null },
});
/** A board of `count` items. */
function boardOf(count: number, description = ''): Committed['board'] {
  const draft = new BoardDraft(emptyBoard());
  addItems(
    draft,
    Object.fromEntries(
      Array.from({ length: count }, (_, i) => [`W-${i + 1}`, fields(`item ${i + 1}`, { description })]),
    ),
    NOW,
  );
  return draft.finish();
}

describe('restore points on a store', () => {
  const used = useStore();

  it('keeps one point per board seq and only the newest 500 of a board', async () => {
    const boardId = unique('b');
    const other = unique('b');
    await capturePoint(used.store, other, committedAt(1), 'batch', 'pro', NOW);
    const one = boardOf(1);
    for (let seq = 1; seq <= POINTS_KEPT + 3; seq++)
      await capturePoint(used.store, boardId, committedAt(seq, one), 'batch', 'pro', NOW + seq);
    const again = await capturePoint(used.store, boardId, committedAt(POINTS_KEPT + 3), 'state', 'pro', NOW + 10_000);
    expect(again).toMatchObject({ _id: `rp_${boardId}_${POINTS_KEPT + 3}`, reason: 'batch' }); // the same seq is the same graph: not kept twice
    const seqs = (await used.store.restorePoints.select({ boardId }, ['seq'], { sort: [['seq', 1]] })).map(
      (p) => p.seq,
    );
    expect(seqs).toHaveLength(POINTS_KEPT);
    expect(seqs[0]).toBe(4);
    expect(await used.store.restorePoints.count({ boardId: other })).toBe(1); // another board's points are its own
    expect(await used.store.restorePointParts.count({ boardId })).toBe(POINTS_KEPT); // the trimmed points' parts went with them
  });

  it('keeps a point larger than one part in parts, reads it whole, and calls it altered when a part changed or is gone', async () => {
    const boardId = unique('b');
    const point = await capturePoint(
      used.store,
      boardId,
      committedAt(7, boardOf(2500, 'd'.repeat(900))),
      'batch',
      'pro',
      NOW,
    );
    expect(point.parts).toBeGreaterThan(1);
    const parts = await used.store.restorePointParts.find({ pointId: point._id }, { sort: [['n', 1]] });
    expect(parts.map((p) => p.text.length).slice(0, -1)).toEqual(Array(point.parts - 1).fill(PART_CHARS));
    const graph = await graphOfPoint(used.store, point);
    expect(graph !== 'altered' && graph.items.map((i) => i.workId)).toEqual(
      Array.from({ length: 2500 }, (_, i) => `W-${i + 1}`),
    );
    const last = parts.at(-1)!;
    await used.store.restorePointParts.update(last._id, last.version, { text: last.text.replace('item', 'itex') });
    expect(await graphOfPoint(used.store, point)).toBe('altered');
    await used.store.restorePointParts.delete(last._id);
    expect(await graphOfPoint(used.store, point)).toBe('altered');
  });

  it('keeps a point of an empty board without parts and reads it back as the empty graph, unless its record was altered', async () => {
    const boardId = unique('b');
    const point = await capturePoint(used.store, boardId, committedAt(0), 'batch', 'free', NOW);
    expect(point).toMatchObject({ seq: 0, itemCount: 0, parts: 0 });
    expect(await used.store.restorePointParts.count({ boardId })).toBe(0);
    expect(await graphOfPoint(used.store, point)).toEqual({ items: [] });
    expect(point.fingerprint).toBe(fingerprintOf(canonicalJson({ items: [] })));
    // A point stored with parts by earlier versions reads as before.
    const older = await capturePoint(used.store, boardId, committedAt(1), 'batch', 'free', NOW);
    await used.store.restorePoints.update(older._id, older.version, { parts: 1 });
    await used.store.restorePointParts.insert({
      _id: `${older._id}:0`,
      version: 1,
      pointId: older._id,
      boardId,
      n: 0,
      text: canonicalJson({ items: [] }),
      capturedAt: NOW,
    });
    expect(await graphOfPoint(used.store, { ...older, parts: 1 })).toEqual({ items: [] });
    expect(await graphOfPoint(used.store, { ...point, fingerprint: `sha256:${'0'.repeat(64)}` })).toBe('altered');
  });

  it('keeps a Free board’s points too, before a move and after a quiet spell: its newest 20 of the last day', async () => {
    const free = unique('p');
    const pro = unique('p');
    for (const [id, plan] of [
      [free, 'free'],
      [pro, 'pro'],
    ] as const)
      await used.store.projects.insert({
        _id: id,
        version: 1,
        name: id,
        ownerId: 'acc',
        plan,
        createdAt: NOW,
        lastActivityAt: NOW,
      });
    await captureBefore(
      used.store,
      { boardId: free, actor: { read: async () => committedAt(3) } },
      'free',
      'batch',
      NOW,
    );
    await captureQuiet(used.store, free, committedAt(4), NOW);
    await captureQuiet(used.store, pro, committedAt(4), NOW);
    expect(await used.store.restorePoints.select({ boardId: free }, ['reason', 'seq'], { sort: [['seq', 1]] })).toEqual(
      [expect.objectContaining({ reason: 'batch', seq: 3 }), expect.objectContaining({ reason: 'quiet', seq: 4 })],
    );
    expect(await used.store.restorePoints.select({ boardId: pro }, ['reason', 'seq'])).toEqual([
      expect.objectContaining({ reason: 'quiet', seq: 4 }),
    ]);
    for (let seq = 5; seq <= 30; seq++)
      await capturePoint(used.store, free, committedAt(seq), 'batch', 'free', NOW + seq);
    expect(
      (await used.store.restorePoints.select({ boardId: free }, ['seq'], { sort: [['seq', 1]] })).map((p) => p.seq),
    ).toEqual(Array.from({ length: FREE_POINTS.kept }, (_, i) => 11 + i));
    await capturePoint(used.store, free, committedAt(31), 'batch', 'free', NOW + FREE_POINTS.withinMs + 20);
    expect(
      (await used.store.restorePoints.select({ boardId: free }, ['seq'], { sort: [['seq', 1]] })).map((p) => p.seq),
    ).toEqual(Array.from({ length: 12 }, (_, i) => 20 + i)); // captured at NOW + 20 and later
  });
});
