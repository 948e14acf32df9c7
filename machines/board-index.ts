// The board's maintained indexes: ordered trees (sorted-btree, copy-on-write) derived from the
// items and updated with every item change through one function, so they cannot disagree with
// the items. A board is never changed in place: a draft clones every tree (O(1), nodes are copied
// on write) and changes the copies, so earlier boards stay valid snapshots; and empty trees are
// one shared tree per index, not one per board.
import sortedBtree from 'sorted-btree';
import { ITEM_STATES, type ItemState } from './item-types.js';
import type { BoardItem } from './board-item.js';

// sorted-btree is CommonJS with `exports.default`: Node's ESM default import is its exports object,
// while a bundler's interop may hand over the class itself.
type BTreeClass = typeof sortedBtree.default;
const loaded = sortedBtree as unknown as BTreeClass | { default: BTreeClass };
export const BTree: BTreeClass = typeof loaded === 'function' ? loaded : loaded.default;
export type Tree<K, V> = import('sorted-btree').default<K, V>;

/**
 * Where a ready (or awaiting-verify) item stands in the chain (DOMAIN.md "Priority chain"):
 * ranked items first, lowest rank first; then priority, 0 first; then creation.
 */
export type ChainKey = readonly [rank: number, priority: number, seq: number];
/** The rank slot of an unranked item: after every ranked one. */
const UNRANKED = Number.MAX_SAFE_INTEGER;
/** [time, workId]: lease deadlines and warnings in time order. */
export type TimeKey = readonly [at: number, workId: string];
/** [a, b] pairs of strings: (holder, workId) and (dependency, dependent). */
export type PairKey = readonly [string, string];

export const WARN_AT_REMAINING = 0.2;

/**
 * A work id's number (W-12 → 12), NaN for anything else. Read digit by digit: the items' tree
 * compares ids with it on every lookup, and a slice and a parse there were a tenth of a decision.
 */
export const seqOf = (workId: string): number => {
  let n = 0;
  for (let i = 2; i < workId.length; i++) {
    const digit = workId.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return NaN;
    n = n * 10 + digit;
  }
  return workId.length > 2 ? n : NaN;
};
export const chainKey = (item: BoardItem): ChainKey => [item.rank ?? UNRANKED, item.priority, seqOf(item.workId)];
/** When a live lease's holder is told it is running out: 20% of its time left. */
export const warnAt = (lease: { expiresAt: number; ttlMs: number }): number =>
  lease.expiresAt - lease.ttlMs * WARN_AT_REMAINING;

const byNumbers = (a: readonly number[], b: readonly number[]): number =>
  a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
/** Chain order of two chain keys. */
export const compareChainKeys: (a: ChainKey, b: ChainKey) => number = byNumbers;
const byTime = (a: TimeKey, b: TimeKey): number => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
const byPair = (a: PairKey, b: PairKey): number =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export interface BoardIndex {
  /** Ready items in pull order. */
  readonly ready: Tree<ChainKey, string>;
  /** Items awaiting verification in pull order. */
  readonly awaiting: Tree<ChainKey, string>;
  /** Every ranked item by [rank, 0, seq], for the lowest and highest rank. */
  readonly ranks: Tree<ChainKey, string>;
  /** Live leases by expiry. */
  readonly expiries: Tree<TimeKey, string>;
  /** Live leases by the time their holder is warned. */
  readonly warnings: Tree<TimeKey, string>;
  /** Live lease id → work id. */
  readonly leases: Tree<string, string>;
  /** Remembered ended lease id → work id and why it ended. */
  readonly ended: Tree<string, { workId: string; reason: string }>;
  /** (holder, workId) for live leases. */
  readonly holders: Tree<PairKey, true>;
  /** (dependency, dependent) for every dependency edge. */
  readonly dependents: Tree<PairKey, true>;
  /** Cancelled items (their pending dependents are stalled). */
  readonly cancelled: Tree<string, true>;
  /** (clauseId, workId) for every spec clause an item links. */
  readonly specLinks: Tree<PairKey, true>;
  readonly counts: Readonly<Record<ItemState, number>>;
}

/**
 * Every index empty, its trees shared by every board: a board's trees are never changed (a draft
 * changes clones of them), so one empty tree of each index serves every board that has nothing
 * there (most of a small board's indexes, most of the time).
 */
const EMPTY: BoardIndex = {
  ready: new BTree<ChainKey, string>(undefined, byNumbers),
  awaiting: new BTree<ChainKey, string>(undefined, byNumbers),
  ranks: new BTree<ChainKey, string>(undefined, byNumbers),
  expiries: new BTree<TimeKey, string>(undefined, byTime),
  warnings: new BTree<TimeKey, string>(undefined, byTime),
  leases: new BTree<string, string>(undefined, byString),
  ended: new BTree<string, { workId: string; reason: string }>(undefined, byString),
  holders: new BTree<PairKey, true>(undefined, byPair),
  dependents: new BTree<PairKey, true>(undefined, byPair),
  cancelled: new BTree<string, true>(undefined, byString),
  specLinks: new BTree<PairKey, true>(undefined, byPair),
  counts: Object.freeze(Object.fromEntries(ITEM_STATES.map((s) => [s, 0])) as Record<ItemState, number>),
};

export const emptyIndex = (): BoardIndex => EMPTY;

/**
 * Swaps each tree of `index` that is empty for the shared empty one (its own, cloned or emptied by
 * deletes, holds a node and a tree object of its own): done as a draft finishes, so a held board
 * keeps trees only where it has entries. `index` must be a draft's, no longer changed.
 */
export function shareEmpty(index: ReturnType<typeof cloneIndex>): void {
  if (!index.ready.size) index.ready = EMPTY.ready;
  if (!index.awaiting.size) index.awaiting = EMPTY.awaiting;
  if (!index.ranks.size) index.ranks = EMPTY.ranks;
  if (!index.expiries.size) index.expiries = EMPTY.expiries;
  if (!index.warnings.size) index.warnings = EMPTY.warnings;
  if (!index.leases.size) index.leases = EMPTY.leases;
  if (!index.ended.size) index.ended = EMPTY.ended;
  if (!index.holders.size) index.holders = EMPTY.holders;
  if (!index.dependents.size) index.dependents = EMPTY.dependents;
  if (!index.cancelled.size) index.cancelled = EMPTY.cancelled;
  if (!index.specLinks.size) index.specLinks = EMPTY.specLinks;
}

/** Copies every tree lazily (shared nodes are copied when first changed) and the counts. */
export function cloneIndex(index: BoardIndex): { -readonly [K in keyof BoardIndex]: BoardIndex[K] } {
  return {
    ready: index.ready.clone(),
    awaiting: index.awaiting.clone(),
    ranks: index.ranks.clone(),
    expiries: index.expiries.clone(),
    warnings: index.warnings.clone(),
    leases: index.leases.clone(),
    ended: index.ended.clone(),
    holders: index.holders.clone(),
    dependents: index.dependents.clone(),
    cancelled: index.cancelled.clone(),
    specLinks: index.specLinks.clone(),
    counts: { ...index.counts },
  };
}

/**
 * Moves `before` to `after` in every index (either may be null: an item added or, in tests,
 * removed). The one place an index changes.
 */
export function reindex(index: ReturnType<typeof cloneIndex>, before: BoardItem | null, after: BoardItem | null): void {
  if (before) {
    const counts = index.counts as Record<ItemState, number>;
    counts[before.state]--;
    if (before.state === 'ready') index.ready.delete(chainKey(before));
    if (before.state === 'awaiting_verify') index.awaiting.delete(chainKey(before));
    if (before.state === 'cancelled') index.cancelled.delete(before.workId);
    if (before.rank !== null) index.ranks.delete([before.rank, 0, seqOf(before.workId)]);
    const lease = before.life.lease;
    if (lease) {
      index.expiries.delete([lease.expiresAt, before.workId]);
      index.warnings.delete([warnAt(lease), before.workId]);
      index.leases.delete(lease.leaseId);
      index.holders.delete([lease.holder, before.workId]);
    }
    for (const ended of before.endedLeases) index.ended.delete(ended.leaseId);
    for (const dep of before.dependsOn) index.dependents.delete([dep, before.workId]);
    for (const clause of before.spec) index.specLinks.delete([clause, before.workId]);
  }
  if (after) {
    const counts = index.counts as Record<ItemState, number>;
    counts[after.state]++;
    if (after.state === 'ready') index.ready.set(chainKey(after), after.workId);
    if (after.state === 'awaiting_verify') index.awaiting.set(chainKey(after), after.workId);
    if (after.state === 'cancelled') index.cancelled.set(after.workId, true);
    if (after.rank !== null) index.ranks.set([after.rank, 0, seqOf(after.workId)], after.workId);
    const lease = after.life.lease;
    if (lease) {
      index.expiries.set([lease.expiresAt, after.workId], after.workId);
      index.warnings.set([warnAt(lease), after.workId], after.workId);
      index.leases.set(lease.leaseId, after.workId);
      index.holders.set([lease.holder, after.workId], true);
    }
    for (const ended of after.endedLeases)
      index.ended.set(ended.leaseId, { workId: after.workId, reason: ended.reason });
    for (const dep of after.dependsOn) index.dependents.set([dep, after.workId], true);
    for (const clause of after.spec) index.specLinks.set([clause, after.workId], true);
  }
}

/** The indexes computed from scratch, for loading a board and for checking the maintained ones. */
export function indexOf(items: Iterable<BoardItem>): BoardIndex {
  const index = cloneIndex(EMPTY);
  for (const item of items) reindex(index, null, item);
  shareEmpty(index);
  return index;
}
