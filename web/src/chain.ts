// The priority chain as the server orders it (DOMAIN.md): ranked items first, lowest rank first,
// then priority (0 first), then creation.
import type { Item } from './types.js';

export const seqOf = (workId: string): number => Number(workId.slice(2));

export const chainOrder = (a: Item, b: Item): number => (a.rank ?? Infinity) - (b.rank ?? Infinity) || a.priority - b.priority || seqOf(a.workId) - seqOf(b.workId);

/**
 * The reorder that moves `workId` one place up or down the chain: the chain's prefix through the
 * item's new place, which POST /api/items/reorder ranks ahead of everything else. Null when the
 * item cannot move that way.
 */
export function moveInChain(chain: readonly Item[], workId: string, by: -1 | 1): string[] | null {
  const ids = [...chain].sort(chainOrder).map((i) => i.workId);
  const at = ids.indexOf(workId);
  const to = at + by;
  if (at < 0 || to < 0 || to >= ids.length) return null;
  [ids[at], ids[to]] = [ids[to]!, ids[at]!];
  return ids.slice(0, Math.max(at, to) + 1);
}
