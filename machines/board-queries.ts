// Reads of a board: the priority chain and the next item to pull, pages of items, counts, leases
// and stalled dependents, each from the board's indexes (machines/board-index.ts).
import { chainKey, compareChainKeys, seqOf } from './board-index.js';
import { dependentsOf, type Board, type BoardItem } from './board.js';
import type { ItemState } from './item-types.js';

/** The lowest and highest rank of the ranked items (0 and 0 when none is ranked). */
export function rankBounds(board: Board): { min: number; max: number } {
  return { min: board.index.ranks.minKey()?.[0] ?? 0, max: board.index.ranks.maxKey()?.[0] ?? 0 };
}

/** Ready (or awaiting-verify) items in pull order: rank, then priority, then creation. */
export function* chain(board: Board, state: 'ready' | 'awaiting_verify' = 'ready'): Generator<BoardItem> {
  for (const workId of (state === 'ready' ? board.index.ready : board.index.awaiting).values())
    yield board.items.get(workId)!;
}

/** The first `limit` items of the chain. */
export function priorityChain(
  board: Board,
  state: 'ready' | 'awaiting_verify' = 'ready',
  limit = Infinity,
): BoardItem[] {
  const out: BoardItem[] = [];
  for (const item of chain(board, state)) {
    if (out.length >= limit) break;
    out.push(item);
  }
  return out;
}

/** The first item of the priority chain this principal may take for `purpose` (among `within` only, for a resource token naming items), or null. */
export function pullNext(
  board: Board,
  principal: string,
  purpose: 'work' | 'verify',
  within: readonly string[] | null = null,
): BoardItem | null {
  const state = purpose === 'work' ? 'ready' : 'awaiting_verify';
  // A verifier takes only items it neither submitted nor worked on since they last became ready.
  const takes = (item: BoardItem) =>
    purpose === 'work' || (item.life.submission?.by !== principal && !item.life.workHolders.includes(principal));
  if (within) {
    // A resource token's few items: order them by their chain keys rather than walk the chain.
    const candidates = within
      .map((id) => board.items.get(id))
      .filter((i): i is BoardItem => i?.state === state && takes(i));
    return candidates.sort((a, b) => compareChainKeys(chainKey(a), chainKey(b)))[0] ?? null;
  }
  for (const item of chain(board, state)) if (takes(item)) return item;
  return null;
}

/**
 * Up to `limit` items after the work id `after` (in the items' key order), only those in `state`
 * and of those `within` takes when given, and the cursor of the next page (null on the last).
 */
export function listItems(
  board: Board,
  options: { state?: ItemState; after?: string; limit: number; within?: ((workId: string) => boolean) | null },
): { items: BoardItem[]; next: string | null } {
  const items: BoardItem[] = [];
  let last: string | undefined;
  for (const [workId, item] of board.items.entries(options.after)) {
    if (workId === options.after) continue;
    last = workId;
    if (options.state !== undefined && item.state !== options.state) continue;
    if (options.within && !options.within(workId)) continue;
    items.push(item);
    if (items.length === options.limit) break;
  }
  const more = last !== undefined && board.items.nextHigherKey(last) !== undefined;
  return { items, next: items.length === options.limit && more ? last! : null };
}

/** How many items are in each state (every state present, zero or not). */
export function countsByState(board: Board): Record<ItemState, number> {
  return { ...board.index.counts };
}

/** Items holding a live lease of `principal`. */
export function heldBy(board: Board, principal: string): BoardItem[] {
  const out: BoardItem[] = [];
  board.index.holders.forRange(
    [principal, ''],
    [principal, '\uffff'],
    true,
    (k) => void out.push(board.items.get(k[1])!),
  );
  return out;
}

/** Every live lease, soonest expiry first. */
export function liveLeases(board: Board): BoardItem[] {
  return board.index.expiries.valuesArray().map((workId) => board.items.get(workId)!);
}

/** The nearest lease expiry on the board. */
export const nextExpiry = (board: Board): number | null => board.index.expiries.minKey()?.[0] ?? null;

/** Dependents whose dependency was cancelled: reported as stalled until an operator re-points them. */
export function stalled(board: Board): string[] {
  const out = new Set<string>();
  for (const cancelled of board.index.cancelled.keys())
    for (const id of dependentsOf(board, cancelled)) if (board.items.get(id)!.state === 'pending') out.add(id);
  return [...out].sort((a, b) => seqOf(a) - seqOf(b));
}
