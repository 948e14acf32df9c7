// The board's work graph as pure functions: creating items under the graph rules, applying one
// lifecycle event with its automatic cascade (dependents unlocked or re-locked in the same
// change). No I/O, no clock: `now` arrives with each call. The graph's rules are in
// machines/board-graph.ts, the board's reads (the priority chain among them) in machines/board-queries.ts.
// A board is never changed in place: decisions change a BoardDraft (copy-on-write trees) and
// finish it into the next board, so every operation costs what it changes, not the board's size.
import { BTree, cloneIndex, indexOf, reindex, seqOf, shareEmpty, type BoardIndex, type Tree } from './board-index.js';
import type { BoardItem, ItemFields } from './board-item.js';
import {
  compareClauseIds,
  doctrineKey,
  clauseKey,
  keyKind,
  splitStored,
  type DoctrineEntry,
  type SpecClause,
  type StoredEntry,
} from './board-entries.js';
import { initialLife, step, type BoardEmitted, type StepResult } from './item-step.js';
import { DEPS_EVENTS, type ItemEvent, type ItemState } from './item-types.js';

export type { BoardItem, ItemFields } from './board-item.js';

export interface Board {
  readonly items: Tree<string, BoardItem>;
  /** Doctrine entries by slug. */
  readonly doctrine: Tree<string, DoctrineEntry>;
  /** Spec clauses by clause id, in number order (never deleted, so the next id is `S-<size + 1>`). */
  readonly spec: Tree<string, SpecClause>;
  readonly nextWorkSeq: number;
  /** Board-wide and never restored by a rewind, so fencing tokens never go backwards. */
  readonly nextFencingToken: number;
  readonly index: BoardIndex;
  /** The store keys this board changed relative to the board it was drafted from: work ids, `doctrine:<slug>`, `spec:S-<n>`. */
  readonly changed: ReadonlySet<string>;
  /** Leases whose item a rewind took off the board, newest last, so a late holder still learns why. */
  readonly retired: readonly RetiredLease[];
  /** Who paused the board and when (machines/board-pause.ts), or null while it runs. Never touched by a rewind. */
  readonly paused: PauseState | null;
  /**
   * The highest version an item had when a rewind took it off the board (0 while none was taken).
   * An item only gains versions while on the board, so every version an absent item ever had is at
   * most this: a rewind bringing one back gives it a version above it (machines/restore-point.ts),
   * and an item's version never repeats one a reader may have seen.
   */
  readonly removedVersion: number;
}

export interface PauseState {
  by: string;
  at: number;
}

export interface RetiredLease {
  leaseId: string;
  workId: string;
  reason: string;
}

type WithoutDeps<E> = E extends { depsDone: boolean } ? Omit<E, 'depsDone'> : E;
/** An item event as a decision names it: the board works out whether the item's dependencies are done. */
export type BoardEvent = WithoutDeps<ItemEvent>;

/** One item's move, with what the machine emitted. */
export interface ItemChange {
  workId: string;
  from: ItemState;
  to: ItemState;
  emitted: BoardEmitted[];
}

export const ENDED_LEASES_KEPT = 5;
/** How a holder ends its own lease: a submission, or a release. Any other ending is a revocation (or an expiry). */
export const HOLDER_ENDINGS: ReadonlySet<string> = new Set(['submitted', 'released']);
/** Leases of removed items a board remembers. */
export const RETIRED_LEASES_KEPT = 200;

export const workIdOf = (seq: number): string => `W-${seq}`;

const NOTHING_CHANGED: ReadonlySet<string> = new Set();

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const byWorkSeq = (a: string, b: string): number => seqOf(a) - seqOf(b);

/** Empty trees shared by every board with nothing there (board-index.ts: a board's trees are never changed). */
const NO_ITEMS = new BTree<string, BoardItem>(undefined, byWorkSeq);
const NO_DOCTRINE = new BTree<string, DoctrineEntry>(undefined, byString);
const NO_SPEC = new BTree<string, SpecClause>(undefined, compareClauseIds);

/**
 * The one empty list of every item that has nothing in a list field (a board of small items holds
 * six per item otherwise). Frozen: nothing changes an item's lists in place (a change makes new ones).
 */
const NO_ENTRIES = Object.freeze([]) as unknown as never[];

/** `item` with each of its empty lists the shared one: the same item, its lists equal. */
function leanLists(item: BoardItem): BoardItem {
  if (!item.dependsOn.length && item.dependsOn !== NO_ENTRIES) item.dependsOn = NO_ENTRIES;
  if (!item.criteria.length && item.criteria !== NO_ENTRIES) item.criteria = NO_ENTRIES;
  if (!item.doctrine.length && item.doctrine !== NO_ENTRIES) item.doctrine = NO_ENTRIES;
  if (!item.spec.length && item.spec !== NO_ENTRIES) item.spec = NO_ENTRIES;
  if (!item.labels.length && item.labels !== NO_ENTRIES) item.labels = NO_ENTRIES;
  if (!item.endedLeases.length && item.endedLeases !== NO_ENTRIES) item.endedLeases = NO_ENTRIES;
  return item;
}

/** A board built from stored entries (items, doctrine entries, spec clauses); its indexes computed once. */
export function boardFrom(
  stored: Iterable<StoredEntry>,
  nextWorkSeq: number,
  nextFencingToken: number,
  retired: readonly RetiredLease[] = [],
  paused: PauseState | null = null,
  removedVersion = 0,
): Board {
  const { items: list, doctrine, spec } = splitStored(stored);
  for (const item of list) leanLists(item);
  return {
    items: list.length
      ? new BTree<string, BoardItem>(
          list.map((i) => [i.workId, i]),
          byWorkSeq,
        )
      : NO_ITEMS,
    doctrine: doctrine.length
      ? new BTree<string, DoctrineEntry>(
          doctrine.map((e) => [e.slug, e]),
          byString,
        )
      : NO_DOCTRINE,
    spec: spec.length
      ? new BTree<string, SpecClause>(
          spec.map((c) => [c.clauseId, c]),
          compareClauseIds,
        )
      : NO_SPEC,
    nextWorkSeq,
    nextFencingToken,
    index: indexOf(list),
    changed: NOTHING_CHANGED,
    retired,
    paused,
    removedVersion,
  };
}

/**
 * `board` brought up to date with what another node committed since it was built: the entries
 * written since, the work ids removed since, and the stored counters, retired leases and pause
 * (kept as the board held it when `stored` does not say).
 */
export function withStored(
  board: Board,
  entries: Iterable<StoredEntry>,
  removed: Iterable<string>,
  stored: Pick<Board, 'nextWorkSeq' | 'nextFencingToken' | 'retired'> & {
    paused?: PauseState | null;
    removedVersion?: number;
  },
): Board {
  const draft = new BoardDraft(board);
  const { items, doctrine, spec } = splitStored(entries);
  for (const item of items) draft.put(item);
  for (const entry of doctrine) draft.putDoctrine(entry);
  for (const clause of spec) draft.putClause(clause);
  for (const workId of removed) draft.remove(workId, 'removed');
  draft.retired = stored.retired;
  draft.nextWorkSeq = stored.nextWorkSeq;
  draft.nextFencingToken = stored.nextFencingToken;
  draft.removedVersion = Math.max(draft.removedVersion, stored.removedVersion ?? 0);
  const paused = stored.paused;
  if (paused !== undefined && (paused?.by !== draft.paused?.by || paused?.at !== draft.paused?.at))
    draft.paused = paused;
  return draft.finish();
}

export const emptyBoard = (nextWorkSeq = 1, nextFencingToken = 1): Board =>
  boardFrom([], nextWorkSeq, nextFencingToken);

/** A board being changed by one decision: reads see its own writes; `finish` makes the next board. */
export class BoardDraft implements Board {
  readonly items: Tree<string, BoardItem>;
  readonly doctrine: Tree<string, DoctrineEntry>;
  readonly spec: Tree<string, SpecClause>;
  readonly index: ReturnType<typeof cloneIndex>;
  readonly changed = new Set<string>();
  nextWorkSeq: number;
  nextFencingToken: number;
  retired: readonly RetiredLease[];
  paused: PauseState | null;
  removedVersion: number;
  private finished = false;

  constructor(readonly base: Board) {
    this.items = base.items.clone();
    this.doctrine = base.doctrine.clone();
    this.spec = base.spec.clone();
    this.index = cloneIndex(base.index);
    this.nextWorkSeq = base.nextWorkSeq;
    this.nextFencingToken = base.nextFencingToken;
    this.retired = base.retired;
    this.paused = base.paused;
    this.removedVersion = base.removedVersion;
  }

  /** Stores `item` (new or replacing its earlier self) and moves it in every index. */
  put(item: BoardItem): void {
    if (this.finished) throw new Error('a finished draft is read-only');
    leanLists(item);
    reindex(this.index, this.items.get(item.workId) ?? null, item);
    this.items.set(item.workId, item);
    this.changed.add(item.workId);
  }

  /** Stores a doctrine entry (new or replacing its earlier self). */
  putDoctrine(entry: DoctrineEntry): void {
    if (this.finished) throw new Error('a finished draft is read-only');
    this.doctrine.set(entry.slug, entry);
    this.changed.add(doctrineKey(entry.slug));
  }

  /** Stores a spec clause (new or replacing its earlier self). */
  putClause(clause: SpecClause): void {
    if (this.finished) throw new Error('a finished draft is read-only');
    this.spec.set(clause.clauseId, clause);
    this.changed.add(clauseKey(clause.clauseId));
  }

  /**
   * Takes `workId` off the board and out of every index (a rewind removing an item); it stays in
   * `changed`. Its ended leases, and its live one ended for `reason`, are remembered in `retired`.
   */
  remove(workId: string, reason: string): void {
    if (this.finished) throw new Error('a finished draft is read-only');
    const item = this.items.get(workId);
    if (!item) return;
    const lease = item.life.lease;
    const ended = [...item.endedLeases, ...(lease ? [{ leaseId: lease.leaseId, reason }] : [])].map((e) => ({
      ...e,
      workId,
    }));
    if (ended.length) this.retired = [...this.retired, ...ended].slice(-RETIRED_LEASES_KEPT);
    this.removedVersion = Math.max(this.removedVersion, item.version);
    reindex(this.index, item, null);
    this.items.delete(workId);
    this.changed.add(workId);
  }

  /** The next board, or the base itself when nothing changed. */
  finish(): Board {
    this.finished = true;
    const same =
      this.nextWorkSeq === this.base.nextWorkSeq &&
      this.nextFencingToken === this.base.nextFencingToken &&
      this.paused === this.base.paused &&
      this.removedVersion === this.base.removedVersion;
    if (!this.changed.size && same) return this.base;
    shareEmpty(this.index); // the draft is read-only now: its reads see the same (empty) trees
    return {
      items: this.items.size ? this.items : NO_ITEMS,
      doctrine: this.doctrine.size ? this.doctrine : NO_DOCTRINE,
      spec: this.spec.size ? this.spec : NO_SPEC,
      index: this.index,
      nextWorkSeq: this.nextWorkSeq,
      nextFencingToken: this.nextFencingToken,
      changed: this.changed,
      retired: this.retired,
      paused: this.paused,
      removedVersion: this.removedVersion,
    };
  }
}

/** The entry a store key names on the board (an item, a doctrine entry or a clause), or undefined when it is not there. */
export function storedEntry(board: Board, key: string): StoredEntry | undefined {
  const named = keyKind(key);
  if (named.kind === 'doctrine') return board.doctrine.get(named.slug);
  if (named.kind === 'spec') return board.spec.get(named.clauseId);
  return board.items.get(key);
}

/** Every entry the board stores: items, doctrine entries and spec clauses. */
export const entryCount = (board: Board): number => board.items.size + board.doctrine.size + board.spec.size;

const depsDone = (board: Board, item: Pick<ItemFields, 'dependsOn'>): boolean =>
  item.dependsOn.every((d) => board.items.get(d)?.state === 'done');

/** The work ids that depend on `workId`. */
export function dependentsOf(board: Board, workId: string): string[] {
  const out: string[] = [];
  board.index.dependents.forRange([workId, ''], [workId, '\uffff'], true, (k) => void out.push(k[1]));
  return out;
}

/** Adds items (already given work ids) as pending or ready; the caller checked the graph. */
export function addItems(draft: BoardDraft, fields: Record<string, ItemFields>, now: number): BoardItem[] {
  const created = Object.entries(fields).map(([workId, f]): BoardItem => {
    // Every field named, in one order, readyAt among them: each item then has one shape with its
    // fields in the object itself, which the spreads of later changes keep. A spread of `f` with
    // ten fields added after it put those in a property array outside the object, mostly slack
    // (160 B an item); and without readyAt here, adding it later made new shapes by the thousand
    // (heap snapshots of 3,000 boards: 30 shapes a board, 5.4 KB, against 5).
    const item: BoardItem = {
      title: f.title,
      description: f.description,
      type: f.type,
      priority: f.priority,
      parentId: f.parentId,
      dependsOn: f.dependsOn,
      verify: f.verify,
      maxAttempts: f.maxAttempts,
      criteria: f.criteria,
      doctrine: f.doctrine,
      spec: f.spec,
      labels: f.labels,
      workId,
      rank: null,
      state: 'pending',
      life: initialLife(f.verify, f.maxAttempts),
      progress: null,
      endedLeases: [],
      createdAt: now,
      updatedAt: now,
      readyAt: undefined,
      version: 1,
    };
    draft.put(item);
    return item;
  });
  return created.map((item) => {
    if (!depsDone(draft, item)) return item;
    const ready: BoardItem = { ...item, state: 'ready', readyAt: now };
    draft.put(ready);
    return ready;
  });
}

/**
 * Applies one lifecycle event to one item and cascades to its dependents in the same change:
 * an item reaching done unlocks pending dependents whose dependencies are all done; an item
 * leaving done sends ready dependents back to pending. A CLAIM takes the next fencing token.
 * Nothing is written to the draft when the event is refused.
 */
export function applyEvent(
  draft: BoardDraft,
  workId: string,
  event: BoardEvent,
): { ok: true; changes: ItemChange[] } | { ok: false; result: Exclude<StepResult, { kind: 'moved' }> } {
  const item = draft.items.get(workId);
  if (!item) throw new Error(`no item ${workId}`);
  // The board supplies what only it knows: the next fencing token, whether dependencies are done
  // (for every event that may put the item back in line: a dependency may have left done, or been
  // added, while it was claimed or awaiting its verdict).
  const resolved =
    event.type === 'CLAIM'
      ? { ...event, fencingToken: draft.nextFencingToken }
      : DEPS_EVENTS.has(event.type)
        ? ({ ...event, depsDone: depsDone(draft, item) } as ItemEvent)
        : (event as ItemEvent);
  const result = step(item.state, item.life, resolved);
  if (result.kind !== 'moved') return { ok: false, result };
  const ended = result.emitted.flatMap((e) =>
    e.type === 'lease.expired'
      ? [{ leaseId: e.lease.leaseId, reason: 'expired' }]
      : e.type === 'lease.revoked'
        ? [{ leaseId: e.lease.leaseId, reason: e.reason }]
        : e.type === 'lease.released'
          ? [{ leaseId: e.lease.leaseId, reason: 'released' }]
          : e.type === 'item.submitted' && item.life.lease
            ? [{ leaseId: item.life.lease.leaseId, reason: 'submitted' }]
            : [],
  );
  // An ending by the holder itself is kept only for a repeat of the call that ended it (its answer
  // lost): the next ending replaces it, so an item holds one at most.
  const endedLeases = ended.length
    ? [...item.endedLeases.filter((e) => !HOLDER_ENDINGS.has(e.reason)), ...ended].slice(-ENDED_LEASES_KEPT)
    : item.endedLeases;
  const at = 'now' in event ? event.now : undefined;
  const readyAt = (state: ItemState, was: BoardItem) => (state === 'ready' && was.state !== 'ready' ? at : was.readyAt);
  draft.put({
    ...item,
    state: result.state,
    life: result.life,
    endedLeases,
    updatedAt: at ?? item.updatedAt,
    readyAt: readyAt(result.state, item),
    version: item.version + 1,
  });
  if (result.emitted.some((e) => e.type === 'lease.granted')) draft.nextFencingToken++;
  const changes: ItemChange[] = [{ workId, from: item.state, to: result.state, emitted: result.emitted }];
  const cascade = (kind: 'DEPS_DONE' | 'DEP_REOPENED', from: ItemState, when: (d: BoardItem) => boolean) => {
    for (const id of dependentsOf(draft, workId)) {
      const dependent = draft.items.get(id)!;
      if (dependent.state !== from || !when(dependent)) continue;
      const moved = step(dependent.state, dependent.life, { type: kind });
      if (moved.kind !== 'moved') continue;
      draft.put({
        ...dependent,
        state: moved.state,
        life: moved.life,
        readyAt: readyAt(moved.state, dependent),
        version: dependent.version + 1,
      });
      changes.push({ workId: dependent.workId, from: dependent.state, to: moved.state, emitted: moved.emitted });
    }
  };
  if (result.state === 'done' && item.state !== 'done') cascade('DEPS_DONE', 'pending', (d) => depsDone(draft, d));
  if (item.state === 'done' && result.state !== 'done') cascade('DEP_REOPENED', 'ready', () => true);
  return { ok: true, changes };
}
