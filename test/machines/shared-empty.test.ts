// A board keeps trees only where it has entries: its empty indexes (and empty doctrine, spec,
// items) are one tree shared by every board, and its items' empty lists one frozen list (issue 46,
// many tenants on one node). Sharing is safe only while no board's tree is ever changed in place:
// these check that boards worked on side by side never see each other's entries through a shared
// tree, and that the indexes still match the items.
import { describe, expect, it } from 'vitest';
import { createItems } from '../../machines/board-commands.js';
import { claim, leaseAction, submit } from '../../machines/lease-commands.js';
import { emptyIndex } from '../../machines/board-index.js';
import { boardFrom, emptyBoard, type Board } from '../../machines/board.js';
import { boardWith, fields, run } from '../board/build.js';
import { expectIndexesRebuilt } from './indexes.js';

const NOW = Date.UTC(2026, 10, 28, 12);
const trees = (board: Board) =>
  Object.entries(board.index).filter(([name]) => name !== 'counts') as [string, { size: number }][];

describe('empty trees shared between boards', () => {
  it('are shared by boards with nothing there, and a board worked on changes none of them', () => {
    const a = boardWith(NOW, 6);
    const b = boardWith(NOW, 6);
    // Nothing leased, ranked, cancelled, linked or depended on: those trees are the shared ones.
    for (const [name, tree] of trees(a)) if (!tree.size) expect(tree, name).toBe(b.index[name as keyof Board['index']]);
    expect(a.doctrine).toBe(b.doctrine);
    expect(a.spec).toBe(emptyBoard().spec);
    // So are the empty lists of its items, frozen.
    const [one, two] = [a.items.get('W-1')!, b.items.get('W-2')!];
    expect(one.labels).toBe(two.dependsOn);
    expect(one.endedLeases).toBe(two.criteria);
    expect(Object.isFrozen(one.labels)).toBe(true);

    const grant = run(
      a,
      claim({ principal: 'agent:a', workId: null, purpose: 'work', ttlMs: 60_000, leaseId: 'lease-1' }),
      NOW,
    );
    expect(grant.board.index.leases.size).toBe(1);
    expect(grant.board.index.holders.size).toBe(1);
    // The boards that shared the empty lease trees still have none.
    expect(b.index.leases.size).toBe(0);
    expect(a.index.leases.size).toBe(0);
    expect(a.index.expiries.size).toBe(0);
    expectIndexesRebuilt(grant.board);

    // Submitted: the lease trees are empty again, and the shared ones once more.
    const done = run(grant.board, submit({ principal: 'agent:a', leaseId: 'lease-1', head: 'abcdef1' }), NOW + 1);
    expect(done.board.index.leases).toBe(b.index.leases);
    expect(done.board.index.holders).toBe(b.index.holders);
    expect(done.board.index.expiries).toBe(b.index.expiries);
    expectIndexesRebuilt(done.board);

    for (const [name, tree] of trees({ index: emptyIndex() } as Board)) expect(tree.size, name).toBe(0);
    expect(Object.values(emptyIndex().counts).every((n) => n === 0)).toBe(true);
  });

  it('are never changed by a board that grows from them, loaded or drafted', () => {
    const loaded = boardFrom([], 1, 1);
    const grown = run(loaded, createItems([fields('one'), fields('two', { dependsOn: ['W-1'] })], 'user:o'), NOW).board;
    expect(grown.items.size).toBe(2);
    expect(grown.items.get('W-2')!.dependsOn).toEqual(['W-1']);
    expect(grown.items.get('W-1')!.dependsOn).toBe(grown.items.get('W-2')!.labels);
    expect(grown.index.dependents.size).toBe(1);
    expect(loaded.items.size).toBe(0);
    expect(boardFrom([], 1, 1).items.size).toBe(0);
    expect(emptyBoard().index.dependents.size).toBe(0);
    expectIndexesRebuilt(grown);
    const released = run(
      run(grown, claim({ principal: 'agent:a', workId: 'W-1', purpose: 'work', ttlMs: 60_000, leaseId: 'l' }), NOW)
        .board,
      leaseAction({ principal: 'agent:a', leaseId: 'l', action: 'release', ttlMs: null }),
      NOW,
    ).board;
    expect(released.index.leases.size).toBe(0);
    expect(emptyIndex().leases.size).toBe(0);
    expectIndexesRebuilt(released);
  });
});
