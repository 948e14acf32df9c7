// The page's priority chain and its one-place moves (web/src/chain.ts), as a table.
import { describe, expect, it } from 'vitest';
import { chainOrder, moveInChain, placeInChain, REORDER_MAX } from '../../web/src/chain.js';
import type { Item } from '../../web/src/types.js';

const item = (workId: string, priority: number, rank: number | null = null) => ({ workId, priority, rank }) as Item;
const chain = [item('W-1', 2), item('W-2', 0), item('W-3', 2, 5), item('W-4', 0), item('W-10', 2)];

describe('the chain in the page', () => {
  it('orders ranked first, then priority, then creation (W-10 after W-4, not before W-2)', () => {
    expect([...chain].sort(chainOrder).map((i) => i.workId)).toEqual(['W-3', 'W-2', 'W-4', 'W-1', 'W-10']);
  });

  it.each([
    ['W-4', -1, ['W-3', 'W-4', 'W-2']],
    ['W-4', 1, ['W-3', 'W-2', 'W-1', 'W-4']],
    ['W-3', 1, ['W-2', 'W-3']],
    ['W-10', -1, ['W-3', 'W-2', 'W-4', 'W-10', 'W-1']],
    ['W-3', -1, null],
    ['W-10', 1, null],
    ['W-99', 1, null],
  ] as const)('moves %s by %i as the reorder %o', (workId, by, expected) => {
    expect(moveInChain(chain, workId, by)).toEqual(expected);
  });

  // The chain is W-3, W-2, W-4, W-1, W-10: a drop before or after a card.
  it.each([
    ['W-10', 'W-2', false, ['W-3', 'W-10', 'W-2', 'W-4', 'W-1']],
    ['W-10', 'W-3', false, ['W-10', 'W-3', 'W-2', 'W-4', 'W-1']],
    ['W-3', 'W-1', true, ['W-2', 'W-4', 'W-1', 'W-3']],
    ['W-2', 'W-4', true, ['W-3', 'W-4', 'W-2']],
    ['W-2', 'W-4', false, null],
    ['W-2', 'W-3', true, null],
    ['W-2', 'W-2', false, null],
    ['W-2', 'W-99', false, null],
  ] as const)('drops %s next to %s (after: %s) as the reorder %o', (workId, target, after, expected) => {
    expect(placeInChain(chain, workId, target, after)).toEqual(expected);
  });

  it('names the whole prefix through the move, even one longer than a reorder takes', () => {
    const long = Array.from({ length: REORDER_MAX + 2 }, (_, i) => item(`W-${i + 1}`, 2));
    const moved = placeInChain(long, `W-${REORDER_MAX + 2}`, `W-${REORDER_MAX + 1}`);
    expect(moved).toHaveLength(REORDER_MAX + 2);
    expect(moved!.slice(-2)).toEqual([`W-${REORDER_MAX + 2}`, `W-${REORDER_MAX + 1}`]);
  });
});
