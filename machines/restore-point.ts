// Restore points (DOMAIN.md "Restore points and rewind"): the work graph as a point holds it, its
// canonical serialisation (what the fingerprint hashes), what applying a point would change,
// slices, and the rewind decision that swaps the graph. Pure: hashing and storage happen outside.
import {
  BoardDraft,
  ENDED_LEASES_KEPT,
  type Board,
  type BoardItem,
  type ItemChange,
  type ItemFields,
} from './board.js';
import { eventsOf, withItemPatches } from './board-commands.js';
import type { Decide } from './board-decision.js';
import { seqOf } from './board-index.js';
import { step } from './item-step.js';
import type { ItemLife, ItemState, Lease } from './item-types.js';

/** The states a point holds: a state that needs a lease counts as the state its lease returns to. */
export type RestoreState = Exclude<ItemState, 'claimed' | 'verifying'>;

/**
 * One item as a restore point holds it: everything that makes the item whole again and nothing
 * that belongs to a lease or to the board's bookkeeping.
 * Kept: the fields people set (ItemFields, rank) and the lifecycle facts a restored item needs to
 * go on under the same rules: `state` (claimed counts as ready, verifying as awaiting_verify),
 * `attempts` (the attempt limit keeps counting), `submission` (the head a verdict must name),
 * `verifications` (evidence, EVIDENCE_EXISTS), `workHolders` (independence of the verifier; a
 * claimed item's is emptied as a release would), `finding`, `overridden` (the item says its gate
 * was bypassed), `blockedReason`, `createdAt`.
 * Left out: `lease` (no lease survives a rewind), `progress` (a note made under a lease),
 * `endedLeases` (lease bookkeeping: the current item's stay, so late holders still learn why),
 * `version`, `updatedAt` and `readyAt` (per-change bookkeeping: a restored item takes a version
 * above any it had, `now`, and its ready time anew), and `life.verify` / `life.maxAttempts` (copies of
 * `verify` / `maxAttempts`).
 */
export interface RestoreItem extends ItemFields {
  workId: string;
  rank: number | null;
  state: RestoreState;
  attempts: number;
  submission: ItemLife['submission'];
  verifications: ItemLife['verifications'];
  workHolders: string[];
  finding: string | null;
  overridden: ItemLife['overridden'];
  blockedReason: string | null;
  createdAt: number;
}

export interface RestoreGraph {
  items: RestoreItem[];
}

export interface RestoreDiff {
  added: string[];
  removed: string[];
  changed: { workId: string; fields: string[] }[];
}

export interface RevokedLease {
  workId: string;
  holder: string;
  purpose: Lease['purpose'];
}

/**
 * A rewind refused: 400 INVALID_REWIND_SLICE (the point does not hold the slice's root), 422
 * REWIND_SLICE_SCOPE (the slice does not fit the current graph) or 409 REWIND_VERSION_MISMATCH
 * (the graph is no longer the one the caller saw). Kept apart from BoardError so
 * that union (checked against the registry) is left as it is; the caller maps it to the registry
 * code of the same name.
 */
export class RewindError extends Error {
  constructor(
    readonly code: 'INVALID_REWIND_SLICE' | 'REWIND_SLICE_SCOPE' | 'REWIND_VERSION_MISMATCH',
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RewindError';
  }
}

type GraphNode = Pick<RestoreItem, 'workId' | 'parentId' | 'dependsOn'>;

const byWorkId = (a: { workId: string }, b: { workId: string }): number => seqOf(a.workId) - seqOf(b.workId);
const bySeq = (a: string, b: string): number => seqOf(a) - seqOf(b);
const normal = (state: ItemState): RestoreState =>
  state === 'claimed' ? 'ready' : state === 'verifying' ? 'awaiting_verify' : state;

/** One item as a point holds it (the fields named one by one, so nothing else ever leaks in). */
function restoreItemOf(item: BoardItem): RestoreItem {
  const { life } = item;
  return {
    workId: item.workId,
    title: item.title,
    description: item.description,
    type: item.type,
    priority: item.priority,
    rank: item.rank,
    parentId: item.parentId,
    dependsOn: item.dependsOn,
    verify: item.verify,
    maxAttempts: item.maxAttempts,
    criteria: item.criteria,
    doctrine: item.doctrine,
    spec: item.spec,
    labels: item.labels,
    state: normal(item.state),
    attempts: life.attempts,
    submission: life.submission,
    verifications: life.verifications,
    workHolders: item.state === 'claimed' ? [] : life.workHolders,
    finding: life.finding,
    overridden: life.overridden,
    blockedReason: life.blockedReason,
    createdAt: item.createdAt,
  };
}

/** The board's work graph as a restore point holds it (in the items' key order; canonicalJson orders them by number). */
export function graphOf(board: Board): RestoreGraph {
  return { items: [...board.items.values()].map(restoreItemOf) };
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonical(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object)
      .filter((k) => object[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(object[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The fingerprint's input: keys sorted at every level, items in work-id order, no whitespace. */
export function canonicalJson(graph: RestoreGraph): string {
  return canonical({ ...graph, items: [...graph.items].sort(byWorkId) });
}

/** What applying `point` would do to `current`, each list in work-id order. */
export function diffGraphs(current: RestoreGraph, point: RestoreGraph): RestoreDiff {
  const now = new Map(current.items.map((i) => [i.workId, i]));
  const then = new Map(point.items.map((i) => [i.workId, i]));
  const changed: RestoreDiff['changed'] = [];
  for (const [workId, was] of [...now].sort(([a], [b]) => bySeq(a, b))) {
    const will = then.get(workId);
    if (!will) continue;
    const a = was as unknown as Record<string, unknown>;
    const b = will as unknown as Record<string, unknown>;
    const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])]
      .filter((k) => canonical(a[k] ?? null) !== canonical(b[k] ?? null))
      .sort();
    if (fields.length) changed.push({ workId, fields });
  }
  return {
    added: [...then.keys()].filter((id) => !now.has(id)).sort(bySeq),
    removed: [...now.keys()].filter((id) => !then.has(id)).sort(bySeq),
    changed,
  };
}

/** `root` and every item whose parent chain reaches it. */
function subtreeOf(items: Iterable<GraphNode>, root: string): Set<string> {
  const children = new Map<string, string[]>();
  for (const { workId, parentId } of items)
    if (parentId !== null) children.set(parentId, [...(children.get(parentId) ?? []), workId]);
  const out = new Set([root]);
  const queue = [root];
  while (queue.length) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (out.has(child)) continue;
      out.add(child);
      queue.push(child);
    }
  }
  return out;
}

/** The slice of `graph` rooted at `rootWorkId`, or null when the point does not hold it. */
export function sliceOf(graph: RestoreGraph, rootWorkId: string): RestoreGraph | null {
  if (!graph.items.some((i) => i.workId === rootWorkId)) return null;
  const ids = subtreeOf(graph.items, rootWorkId);
  return { items: graph.items.filter((i) => ids.has(i.workId)).sort(byWorkId) };
}

/** The one item of a slice whose parent lies outside it, or null when there is not exactly one. */
function rootOf(slice: RestoreGraph): string | null {
  const ids = new Set(slice.items.map((i) => i.workId));
  const roots = slice.items.filter((i) => i.parentId === null || !ids.has(i.parentId));
  return roots.length === 1 ? roots[0]!.workId : null;
}

/** The work ids a slice replaces: the current subtree of its root and the slice's own items. */
function replacedBy(current: Iterable<GraphNode>, slice: RestoreGraph, root: string): Set<string> {
  const out = subtreeOf(current, root);
  for (const item of slice.items) out.add(item.workId);
  return out;
}

/**
 * What applying `slice` (rooted at `root`) would do to `current`: the diff against the items it
 * replaces, its root's current subtree and every item it holds (wherever they are now), as the
 * rewind decision replaces them; the rest of the board is not compared.
 */
export function diffSlice(current: RestoreGraph, slice: RestoreGraph, root: string): RestoreDiff {
  const replaced = replacedBy(current.items, slice, root);
  return diffGraphs({ items: current.items.filter((i) => replaced.has(i.workId)) }, slice);
}

/** The graph rules (DOMAIN.md "Items") over a whole graph: a message for the first broken one. */
function graphProblem(nodes: ReadonlyMap<string, GraphNode>): string | null {
  const ancestors = (workId: string): string[] => {
    const out: string[] = [];
    for (
      let at = nodes.get(workId)?.parentId ?? null;
      at !== null && !out.includes(at);
      at = nodes.get(at)?.parentId ?? null
    )
      out.push(at);
    return out;
  };
  for (const [workId, node] of nodes) {
    if (ancestors(workId).includes(workId)) return `${workId}'s parents would form a cycle.`;
    for (const dep of node.dependsOn) {
      if (dep === workId) return `${workId} would depend on itself.`;
      if (ancestors(workId).includes(dep) || ancestors(dep).includes(workId))
        return `${workId} would depend on its own ancestor or descendant ${dep}.`;
    }
  }
  // Dependency cycles: peel off items whose dependencies are all peeled; whatever remains is on or behind a cycle.
  const waiting = new Map([...nodes].map(([id, n]) => [id, n.dependsOn.filter((d) => nodes.has(d)).length]));
  const dependents = new Map<string, string[]>();
  for (const [id, n] of nodes) for (const dep of n.dependsOn) dependents.set(dep, [...(dependents.get(dep) ?? []), id]);
  const free = [...waiting].filter(([, n]) => n === 0).map(([id]) => id);
  while (free.length) {
    const id = free.pop()!;
    waiting.delete(id);
    for (const dependent of dependents.get(id) ?? []) {
      const left = waiting.get(dependent)! - 1;
      waiting.set(dependent, left);
      if (left === 0) free.push(dependent);
    }
  }
  if (waiting.size)
    return `The dependencies of ${[...waiting.keys()].sort(bySeq).slice(0, 5).join(', ')} would form a cycle.`;
  return null;
}

/**
 * Null when `slice` fits `current`, else why not (422 REWIND_SLICE_SCOPE). Applying a slice keeps
 * the current items outside its root's current subtree and puts the slice's items in its place.
 */
export function checkSlice(current: RestoreGraph, slice: RestoreGraph): string | null {
  const root = rootOf(slice);
  if (root === null) return 'A slice is one item and every item whose parent chain reaches it.';
  const replaced = replacedBy(current.items, slice, root);
  const after = new Map<string, GraphNode>();
  for (const item of current.items) if (!replaced.has(item.workId)) after.set(item.workId, item);
  for (const item of slice.items) after.set(item.workId, item);
  for (const item of slice.items) {
    if (item.parentId !== null && !after.has(item.parentId))
      return `Restored ${item.workId} is parented under ${item.parentId}, which would not exist after the rewind.`;
    const missing = item.dependsOn.find((d) => !after.has(d));
    if (missing !== undefined)
      return `Restored ${item.workId} depends on ${missing}, which would not exist after the rewind.`;
  }
  for (const item of current.items) {
    if (replaced.has(item.workId)) continue;
    if (item.parentId !== null && !after.has(item.parentId))
      return `${item.workId} is parented under ${item.parentId}, which the slice removes.`;
    const missing = item.dependsOn.find((d) => !after.has(d));
    if (missing !== undefined) return `${item.workId} depends on ${missing}, which the slice removes.`;
  }
  return graphProblem(after);
}

/**
 * A board item from a point's item; `was` is the current item of that work id, if any. Its version
 * goes on from `was`, or, for an item the board no longer holds, from above every version a removed
 * item had (`Board.removedVersion`): a reader's old version of it never matches again.
 */
function itemFrom(r: RestoreItem, was: BoardItem | undefined, removedVersion: number, now: number): BoardItem {
  const state = normal(r.state);
  const lease = was?.life.lease ?? null;
  const endedLeases = lease
    ? [...was!.endedLeases, { leaseId: lease.leaseId, reason: 'rewound' }].slice(-ENDED_LEASES_KEPT)
    : (was?.endedLeases ?? []);
  const readyAt = state === 'ready' ? (was?.state === 'ready' ? was.readyAt : now) : was?.readyAt;
  const life: ItemLife = {
    verify: r.verify,
    attempts: r.attempts,
    maxAttempts: r.maxAttempts,
    lease: null,
    submission: r.submission,
    verifications: r.verifications,
    workHolders: state === 'ready' ? [] : r.workHolders,
    finding: r.finding,
    overridden: r.overridden,
    blockedReason: r.blockedReason,
  };
  return {
    workId: r.workId,
    title: r.title,
    description: r.description,
    type: r.type,
    priority: r.priority,
    rank: r.rank,
    parentId: r.parentId,
    dependsOn: r.dependsOn,
    verify: r.verify,
    maxAttempts: r.maxAttempts,
    criteria: r.criteria,
    doctrine: r.doctrine,
    spec: r.spec,
    labels: r.labels,
    state,
    life,
    progress: null,
    endedLeases,
    createdAt: r.createdAt,
    updatedAt: now,
    version: (was?.version ?? removedVersion) + 1,
    ...(readyAt === undefined ? {} : { readyAt }),
  };
}

/** Pending and ready follow the dependencies again, as the machine's own cascade moves them (an item written by this draft already has its next version). */
function settle(draft: BoardDraft, now: number): void {
  const moves: BoardItem[] = [];
  for (const item of draft.items.values()) {
    if (item.state !== 'pending' && item.state !== 'ready') continue;
    const done = item.dependsOn.every((d) => draft.items.get(d)?.state === 'done');
    const kind =
      item.state === 'pending' && done ? 'DEPS_DONE' : item.state === 'ready' && !done ? 'DEP_REOPENED' : null;
    if (!kind) continue;
    const moved = step(item.state, item.life, { type: kind });
    if (moved.kind !== 'moved') continue;
    const { readyAt: _readyAt, ...rest } = item;
    const readyAt = moved.state === 'ready' ? now : item.readyAt;
    moves.push({
      ...rest,
      state: moved.state,
      life: moved.life,
      version: draft.changed.has(item.workId) ? item.version : item.version + 1,
      ...(readyAt === undefined ? {} : { readyAt }),
    });
  }
  for (const item of moves) draft.put(item);
}

/**
 * Swaps the board's work graph for `graph` (whole, or the slice rooted at `input.slice`) in one
 * draft: every live lease on a replaced or removed item ends (`lease.revoked`, reason `rewound`,
 * remembered on the item so a renew says so), pending and ready follow the dependencies again,
 * and the work-id and fencing counters never go backwards. A replaced item whose graph is
 * unchanged and holds no lease is left as it is. The board's `changed` names removed work ids
 * too: for those `items.get` is undefined. With `expected` (the canonical JSON of the graph the
 * caller checked and kept as its undo point) a board whose graph moved since is refused, so the
 * undo point is exactly the graph this swap replaces. The reply holds the new graph's canonical
 * JSON (`after`), which the caller fingerprints.
 */
export function rewind(
  graph: RestoreGraph,
  input: { actor: string; restorePointId: string; slice?: string; expected?: string },
): Decide<{ revokedLeases: RevokedLease[]; after: string }> {
  return (board, now) => {
    const before = graphOf(board);
    if (input.expected !== undefined && canonicalJson(before) !== input.expected) {
      throw new RewindError(
        'REWIND_VERSION_MISMATCH',
        'The board changed since its fingerprint was read; preview again and retry.',
        { restorePointId: input.restorePointId },
      );
    }
    let restored = graph;
    let replaced: Set<string>;
    if (input.slice === undefined) replaced = new Set([...board.items.keys(), ...graph.items.map((i) => i.workId)]);
    else {
      const slice = sliceOf(graph, input.slice);
      if (!slice)
        throw new RewindError('INVALID_REWIND_SLICE', `The restore point does not hold ${input.slice}.`, {
          restorePointId: input.restorePointId,
          slice: input.slice,
        });
      const problem = checkSlice(before, slice);
      if (problem)
        throw new RewindError('REWIND_SLICE_SCOPE', problem, {
          restorePointId: input.restorePointId,
          slice: input.slice,
        });
      restored = slice;
      replaced = replacedBy(before.items, slice, input.slice);
    }
    const incoming = new Map(restored.items.map((i) => [i.workId, i]));
    const draft = new BoardDraft(board);
    const changes: ItemChange[] = [];
    const revokedLeases: RevokedLease[] = [];
    const ended = new Map<string, ItemChange['emitted']>();
    for (const workId of [...replaced].sort(bySeq)) {
      const was = board.items.get(workId);
      const lease = was?.life.lease;
      if (was && lease) {
        ended.set(workId, [{ type: 'lease.revoked', lease, reason: 'rewound' }]);
        revokedLeases.push({ workId, holder: lease.holder, purpose: lease.purpose });
      }
      const item = incoming.get(workId);
      if (!item) draft.remove(workId, 'rewound');
      else if (!was || lease || canonical(restoreItemOf(was)) !== canonical(item))
        draft.put(itemFrom(item, was, board.removedVersion, now));
    }
    settle(draft, now);
    // The log tells each kept item's lease ending and state move, as any other move does.
    for (const workId of [...draft.changed].sort(bySeq)) {
      const was = board.items.get(workId);
      const is = draft.items.get(workId);
      if (was && is && (ended.has(workId) || was.state !== is.state))
        changes.push({ workId, from: was.state, to: is.state, emitted: ended.get(workId) ?? [] });
      else if (was && ended.has(workId))
        changes.push({ workId, from: was.state, to: was.state, emitted: ended.get(workId)! });
    }
    const highest = restored.items.reduce((max, i) => Math.max(max, seqOf(i.workId)), 0);
    draft.nextWorkSeq = Math.max(draft.nextWorkSeq, highest + 1);
    const next = draft.finish();
    const after = graphOf(next);
    const diff = diffGraphs(before, after);
    const counts = {
      added: diff.added.length,
      removed: diff.removed.length,
      changed: diff.changed.length,
      revokedLeases: revokedLeases.length,
    };
    const rewound = {
      type: 'board.rewound',
      actor: input.actor,
      workId: null,
      data: { restorePointId: input.restorePointId, slice: input.slice ?? null, counts },
    };
    // A state a rewind puts back is no work done: `rewound` marks its moves, so metrics skip them.
    const moves = eventsOf(changes, input.actor).map((e) =>
      e.type === 'item.state' ? { ...e, data: { ...e.data, rewound: true } } : e,
    );
    // Each event about an item carries its patch, as every other decision's; a removed item's none.
    const patched = withItemPatches(board, next, moves);
    return {
      board: next,
      events: [...patched, rewound],
      reply: { revokedLeases, after: canonicalJson(after) },
    };
  };
}
