// The board's work graph as pure functions: creating items under the graph rules, applying one
// lifecycle event with its automatic cascade (dependents unlocked or re-locked in the same
// change), and the priority chain. No I/O, no clock: `now` arrives with each call.
import { initialLife, step, type BoardEmitted, type StepResult } from './item-step.js';
import { ITEM_STATES, type ItemEvent, type ItemLife, type ItemState } from './item-types.js';

export interface ItemFields {
  title: string;
  description: string;
  type: 'task' | 'bug' | 'chore' | 'epic';
  priority: number;
  parentId: string | null;
  dependsOn: string[];
  verify: 'none' | 'required';
  maxAttempts: number;
  criteria: string[];
  doctrine: string[];
  spec: string[];
  labels: string[];
}

export interface BoardItem extends ItemFields {
  workId: string;
  rank: number;
  state: ItemState;
  life: ItemLife;
  progress: { note: string; by: string; at: number } | null;
  /** Recently ended leases, so a late holder learns why: expired, or revoked (blocked, cancelled, superseded, overridden). */
  endedLeases: { leaseId: string; reason: string }[];
  createdAt: number;
  updatedAt: number;
  /** Bumps on every change of the item. */
  version: number;
}

export interface Board {
  items: Record<string, BoardItem>;
  nextWorkSeq: number;
  /** Board-wide and never restored by a rewind, so fencing tokens never go backwards. */
  nextFencingToken: number;
}

/** One item's move, with what the machine emitted. */
export interface ItemChange {
  workId: string;
  from: ItemState;
  to: ItemState;
  emitted: BoardEmitted[];
}

export type GraphError = { code: 'CONFLICTING_DEPENDENCIES' | 'CROSS_PROJECT_FOLD' | 'CROSS_PROJECT_PARENT'; message: string };

export const ENDED_LEASES_KEPT = 5;

export const workIdOf = (seq: number): string => `W-${seq}`;

const depsDone = (board: Board, item: Pick<ItemFields, 'dependsOn'>): boolean => item.dependsOn.every((d) => board.items[d]?.state === 'done');

/** Ancestors through parentId, nearest first. */
function ancestors(items: Record<string, Pick<BoardItem, 'parentId'>>, workId: string): string[] {
  const out: string[] = [];
  for (let at = items[workId]?.parentId ?? null; at && !out.includes(at); at = items[at]?.parentId ?? null) out.push(at);
  return out;
}

/** Checks dependencies and parents of `candidates` against the board plus the candidates themselves. */
export function checkGraph(board: Board, candidates: Record<string, Pick<BoardItem, 'dependsOn' | 'parentId'>>): GraphError | null {
  const all: Record<string, Pick<BoardItem, 'dependsOn' | 'parentId'>> = { ...board.items, ...candidates };
  for (const [workId, item] of Object.entries(candidates)) {
    if (item.parentId !== null && !(item.parentId in all)) return { code: 'CROSS_PROJECT_PARENT', message: `${workId}: parent ${item.parentId} is not on this board.` };
    for (const dep of item.dependsOn) {
      if (!(dep in all)) return { code: 'CROSS_PROJECT_FOLD', message: `${workId}: dependency ${dep} is not on this board.` };
      if (dep === workId) return { code: 'CONFLICTING_DEPENDENCIES', message: `${workId} depends on itself.` };
      if (ancestors(all, workId).includes(dep) || ancestors(all, dep).includes(workId)) {
        return { code: 'CONFLICTING_DEPENDENCIES', message: `${workId} cannot depend on its own ancestor or descendant ${dep}.` };
      }
    }
    if (ancestors(all, workId).includes(workId)) return { code: 'CONFLICTING_DEPENDENCIES', message: `${workId}'s parents form a cycle.` };
  }
  // A cycle anywhere among the dependencies (depth-first, colouring).
  const colour = new Map<string, 1 | 2>();
  const visit = (id: string): string | null => {
    if (colour.get(id) === 2) return null;
    if (colour.get(id) === 1) return id;
    colour.set(id, 1);
    for (const dep of all[id]?.dependsOn ?? []) {
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    colour.set(id, 2);
    return null;
  };
  for (const id of Object.keys(candidates)) {
    const cycle = visit(id);
    if (cycle) return { code: 'CONFLICTING_DEPENDENCIES', message: `The dependencies of ${cycle} form a cycle.` };
  }
  return null;
}

/** Adds items (already given work ids) as pending or ready; the caller checked the graph. */
export function addItems(board: Board, fields: Record<string, ItemFields>, now: number): { board: Board; created: BoardItem[] } {
  const items = { ...board.items };
  const lastRank = Math.max(0, ...Object.values(board.items).map((i) => i.rank));
  const created = Object.entries(fields).map(([workId, f], i): BoardItem => {
    const item: BoardItem = { ...f, workId, rank: lastRank + i + 1, state: 'pending', life: initialLife(f.verify, f.maxAttempts), progress: null, endedLeases: [], createdAt: now, updatedAt: now, version: 1 };
    items[workId] = item;
    return item;
  });
  const next = { ...board, items };
  for (const item of created) if (depsDone(next, item)) item.state = 'ready';
  return { board: next, created };
}

/**
 * Applies one lifecycle event to one item and cascades to its dependents in the same change:
 * an item reaching done unlocks pending dependents whose dependencies are all done; an item
 * leaving done sends ready dependents back to pending. A CLAIM takes the next fencing token.
 */
export function applyEvent(board: Board, workId: string, event: ItemEvent): { ok: true; board: Board; changes: ItemChange[] } | { ok: false; result: Exclude<StepResult, { kind: 'moved' }> } {
  const item = board.items[workId];
  if (!item) throw new Error(`no item ${workId}`);
  // The board supplies what only it knows: the next fencing token, whether dependencies are done.
  const resolved: ItemEvent =
    event.type === 'CLAIM' ? { ...event, fencingToken: board.nextFencingToken } : event.type === 'UNBLOCK' || event.type === 'REOPEN' ? { ...event, depsDone: depsDone(board, item) } : event;
  const result = step(item.state, item.life, resolved);
  if (result.kind !== 'moved') return { ok: false, result };
  const ended = result.emitted.flatMap((e) => (e.type === 'lease.expired' ? [{ leaseId: e.lease.leaseId, reason: 'expired' }] : e.type === 'lease.revoked' ? [{ leaseId: e.lease.leaseId, reason: e.reason }] : []));
  const endedLeases = ended.length ? [...item.endedLeases, ...ended].slice(-ENDED_LEASES_KEPT) : item.endedLeases;
  const items = { ...board.items, [workId]: { ...item, state: result.state, life: result.life, endedLeases, updatedAt: 'now' in event ? event.now : item.updatedAt, version: item.version + 1 } };
  let next: Board = { ...board, items, nextFencingToken: board.nextFencingToken + (result.emitted.some((e) => e.type === 'lease.granted') ? 1 : 0) };
  const changes: ItemChange[] = [{ workId, from: item.state, to: result.state, emitted: result.emitted }];
  const cascade = (kind: 'DEPS_DONE' | 'DEP_REOPENED', from: ItemState, when: (d: BoardItem) => boolean) => {
    for (const dependent of Object.values(next.items)) {
      if (dependent.state !== from || !dependent.dependsOn.includes(workId) || !when(dependent)) continue;
      const moved = step(dependent.state, dependent.life, { type: kind });
      if (moved.kind !== 'moved') continue;
      next = { ...next, items: { ...next.items, [dependent.workId]: { ...dependent, state: moved.state, life: moved.life, version: dependent.version + 1 } } };
      changes.push({ workId: dependent.workId, from: dependent.state, to: moved.state, emitted: moved.emitted });
    }
  };
  if (result.state === 'done' && item.state !== 'done') cascade('DEPS_DONE', 'pending', (d) => depsDone(next, d));
  if (item.state === 'done' && result.state !== 'done') cascade('DEP_REOPENED', 'ready', () => true);
  return { ok: true, board: next, changes };
}

/** Ready items by rank, then priority, then creation: the order agents pull in. */
export function priorityChain(board: Board, state: ItemState = 'ready'): BoardItem[] {
  const seq = (id: string) => Number(id.slice(2));
  return Object.values(board.items)
    .filter((i) => i.state === state)
    .sort((a, b) => a.rank - b.rank || a.priority - b.priority || seq(a.workId) - seq(b.workId));
}

/** The first item this principal may take for `purpose`, or null. */
export function pullNext(board: Board, principal: string, purpose: 'work' | 'verify'): BoardItem | null {
  if (purpose === 'work') return priorityChain(board, 'ready')[0] ?? null;
  return priorityChain(board, 'awaiting_verify').find((i) => i.life.submission?.by !== principal && !i.life.workHolders.includes(principal)) ?? null;
}

/** How many items are in each state (every state present, zero or not). */
export function countsByState(board: Board): Record<ItemState, number> {
  const counts = Object.fromEntries(ITEM_STATES.map((s) => [s, 0])) as Record<ItemState, number>;
  for (const item of Object.values(board.items)) counts[item.state]++;
  return counts;
}

/** Dependents whose dependency was cancelled: reported as stalled until an operator re-points them. */
export function stalled(board: Board): string[] {
  return Object.values(board.items)
    .filter((i) => i.state === 'pending' && i.dependsOn.some((d) => board.items[d]?.state === 'cancelled'))
    .map((i) => i.workId);
}
