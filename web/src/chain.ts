// The priority chain as the server orders it (DOMAIN.md): ranked items first, lowest rank first,
// then priority (0 first), then creation; and the reorders that move an item within it.
import type { Item } from './types.js';

type Chained = Pick<Item, 'workId' | 'rank' | 'priority'>;

/** A reorder names at most this many work ids (POST /api/items/reorder). */
export const REORDER_MAX = 500;

export const seqOf = (workId: string): number => Number(workId.slice(2));

export const chainOrder = (a: Chained, b: Chained): number =>
  (a.rank ?? Infinity) - (b.rank ?? Infinity) || a.priority - b.priority || seqOf(a.workId) - seqOf(b.workId);

/**
 * The reorder that puts `workId` just before (or after) `target` in the chain: the chain's prefix
 * through the farther of the item's old and new places, which POST /api/items/reorder ranks ahead
 * of everything else (api.ts sendReorder sends one longer than a reorder takes in parts). Null when
 * nothing would move.
 */
export function placeInChain(
  chain: readonly Chained[],
  workId: string,
  target: string,
  after = false,
): string[] | null {
  const ids = [...chain].sort(chainOrder).map((i) => i.workId);
  const from = ids.indexOf(workId);
  if (from < 0 || !ids.includes(target) || workId === target) return null;
  ids.splice(from, 1);
  const to = ids.indexOf(target) + (after ? 1 : 0);
  if (to === from) return null;
  ids.splice(to, 0, workId);
  return ids.slice(0, Math.max(from, to) + 1);
}

/** The reorder that moves `workId` one place up or down the chain (null when it cannot move that way). */
export function moveInChain(chain: readonly Chained[], workId: string, by: -1 | 1): string[] | null {
  const ids = [...chain].sort(chainOrder).map((i) => i.workId);
  const at = ids.indexOf(workId);
  const neighbour = ids[at + by];
  return at < 0 || neighbour === undefined ? null : placeInChain(chain, workId, neighbour, by === 1);
}
