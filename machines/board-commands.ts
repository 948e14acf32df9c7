// The board's commands as pure decisions: each takes the board and the time and returns the next
// board, the events to log and the reply, or throws BoardError with a registry code. The holder's
// lease decisions (claim, renew, release, submit, progress, expiry) are lease-commands.ts.
import {
  addItems,
  applyEvent,
  BoardDraft,
  workIdOf,
  type Board,
  type BoardEvent,
  type BoardItem,
  type ItemChange,
  type ItemFields,
} from './board.js';
import { checkGraph } from './board-graph.js';
import { rankBounds } from './board-queries.js';
import type { Decide, Decision, NewEvent } from './board-decision.js';
import { BoardError } from './board-error.js';
import { missingDoctrine } from './doctrine-commands.js';
import type { Lease, RefusalCode } from './item-types.js';
import { iso, itemDelta } from './item-view.js';

const publicLease = (lease: Lease) => ({
  holder: lease.holder,
  purpose: lease.purpose,
  fencingToken: lease.fencingToken,
  expiresAt: iso(lease.expiresAt),
});

/** Log entries for a set of item changes: the state move, then what the machine emitted. */
export function eventsOf(changes: ItemChange[], actor: string): NewEvent[] {
  return changes.flatMap((c) => [
    ...c.emitted.map((e): NewEvent => {
      const { type, ...rest } = e;
      const data = 'lease' in rest ? { ...rest, lease: publicLease(rest.lease) } : rest;
      return { type, actor, workId: c.workId, data };
    }),
    ...(c.from !== c.to ? [{ type: 'item.state', actor, workId: c.workId, data: { from: c.from, to: c.to } }] : []),
  ]);
}

/**
 * Gives a decision's events what a watcher needs to apply them without reading the item back:
 * each event naming an item carries `item`, that item's patch for the commit (workId, version,
 * state and every changed field; machines/item-view.ts); an event naming none (a reorder) carries
 * `items`, the patches of the items it changed. Nothing changed, nothing added.
 */
function withPatches<R>(base: Board, decision: Decision<R>): Decision<R> {
  const next = decision.board;
  if (next === base || !decision.events.length) return decision;
  const named = new Set(decision.events.map((e) => e.workId));
  const unnamed: ReturnType<typeof itemDelta>[] = [];
  for (const workId of next.changed) {
    const after = named.has(workId) ? undefined : next.items.get(workId);
    if (after) unnamed.push(itemDelta(base.items.get(workId), after));
  }
  const events = withItemPatches(base, next, decision.events).map((e) =>
    e.workId === null && unnamed.length ? { ...e, data: { ...e.data, items: unnamed } } : e,
  );
  return { ...decision, events };
}

/**
 * Each event naming an item the commit changed carries `item`, that item's patch (an item the
 * commit removed, a rewind's, has none). Alone, without withPatches' list on the events naming no
 * item, for a rewind: it may change every item of a large board, and its watchers load the board again.
 */
export function withItemPatches(base: Board, next: Board, events: NewEvent[]): NewEvent[] {
  if (next === base) return events;
  const patches = new Map<string, ReturnType<typeof itemDelta> | null>();
  return events.map((e): NewEvent => {
    if (e.workId === null) return e;
    let patch = patches.get(e.workId);
    if (patch === undefined) {
      const after = next.changed.has(e.workId) ? next.items.get(e.workId) : undefined;
      patch = after ? itemDelta(base.items.get(e.workId), after) : null;
      patches.set(e.workId, patch);
    }
    return patch ? { ...e, data: { ...e.data, item: patch } } : e;
  });
}

/** A decision whose events carry their items' patches. */
export const patched =
  <R>(decide: Decide<R>): Decide<R> =>
  (board, now) =>
    withPatches(board, decide(board, now));

export function refusal(
  item: BoardItem,
  kind: 'refused' | 'invalid',
  code: RefusalCode | 'INVALID_TRANSITION',
  allowed?: string[],
): BoardError {
  if (kind === 'invalid')
    return new BoardError('INVALID_TRANSITION', `${item.workId} is ${item.state}, which does not take that event.`, {
      workId: item.workId,
      state: item.state,
      allowed,
    });
  const lease = item.life.lease;
  const holder = lease ? { holder: lease.holder, expiresAt: iso(lease.expiresAt) } : {};
  return new BoardError(code, `${item.workId} (${item.state}): ${code}`, {
    workId: item.workId,
    state: item.state,
    ...holder,
  });
}

export function itemOr404(board: Board, workId: string): BoardItem {
  const item = board.items.get(workId);
  if (!item) throw new BoardError('ITEM_NOT_FOUND', `No item ${workId} on this board.`, { workId });
  return item;
}

/** Applies one event to one item of the draft; refusals become BoardErrors (and change nothing). */
export function move(draft: BoardDraft, workId: string, event: BoardEvent, actor: string): NewEvent[] {
  const item = itemOr404(draft, workId);
  const r = applyEvent(draft, workId, event);
  if (!r.ok) {
    if (r.result.kind === 'unchanged') return [];
    throw r.result.kind === 'invalid'
      ? refusal(item, 'invalid', 'INVALID_TRANSITION', r.result.allowed)
      : refusal(item, 'refused', r.result.code);
  }
  return eventsOf(r.changes, actor);
}

/** One event on one item as a whole decision; the reply is read from the item as it ends up. */
export function moved<R>(
  board: Board,
  workId: string,
  event: BoardEvent,
  actor: string,
  reply: (item: BoardItem) => R,
): Decision<R> {
  const draft = new BoardDraft(board);
  const events = move(draft, workId, event, actor);
  return { board: draft.finish(), events, reply: reply(draft.items.get(workId)!) };
}

const sameList = (a: readonly string[] = [], b: readonly string[] = []) =>
  a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * Whether a verdict or a supersede repeats one that landed (its answer lost: a 5xx said retry).
 * A verdict: the item's latest verification is this verifier's, of the same verdict, finding and
 * evidence on the same head, and the submission it judged is still the item's (a verdict always
 * moves the item on, so one awaiting its verdict again was submitted since). A supersede: the
 * item's submission is this submitter's supersede to that head. Anything else (another verdict, a
 * supersede naming the head a submit gave) goes to the machine, refused there as before.
 */
function repeats(item: BoardItem, event: BoardEvent): boolean {
  const submission = item.life.submission;
  if (event.type === 'SUPERSEDE')
    return submission?.supersedes !== undefined && submission.by === event.principal && submission.head === event.head;
  if (event.type !== 'VERIFY' || item.state === 'awaiting_verify' || item.state === 'verifying') return false;
  const last = item.life.verifications.at(-1);
  return (
    last !== undefined &&
    last.by === event.principal &&
    last.head === event.head &&
    last.verdict === event.verdict &&
    last.finding === event.finding &&
    sameList(last.evidence, event.evidence) &&
    submission?.head === last.head &&
    submission.at <= last.at
  );
}

/**
 * Supersede, verify, and the operator moves: one event for one named item. A verdict or a
 * supersede repeated after its answer was lost changes nothing and answers the item's state as it
 * now stands, as a repeated submit does (lease-commands.ts).
 */
export function itemEvent(
  workId: string,
  actor: string,
  event: (now: number) => BoardEvent,
): Decide<{ workId: string; state: string }> {
  return patched((board, now) => {
    const next = event(now);
    const item = itemOr404(board, workId);
    if (repeats(item, next)) return { board, events: [], reply: { workId, state: item.state } };
    return moved(board, workId, next, actor, (after) => ({ workId, state: after.state }));
  });
}

/** An override as it stands on the item: what the audit row of it records, keyed by `at`. */
export interface OverrideReply {
  workId: string;
  state: string;
  reason: string;
  at: number;
}

/**
 * An operator's pass of the verify gate. Repeated by the principal whose override the item holds
 * (its answer lost, or its audit row not written), it changes nothing and answers as the first
 * did, with the override as it stands: the caller writes the row the first may have missed.
 */
export function overrideItem(workId: string, principal: string, reason: string): Decide<OverrideReply> {
  return patched((board, now) => {
    const item = itemOr404(board, workId);
    const stands = item.life.overridden;
    if (item.state === 'done' && stands?.by === principal)
      return { board, events: [], reply: { workId, state: item.state, reason: stands.reason, at: stands.at } };
    return moved(board, workId, { type: 'OVERRIDE', principal, reason, now }, principal, (after) => ({
      workId,
      state: after.state,
      reason: after.life.overridden!.reason,
      at: after.life.overridden!.at,
    }));
  });
}

export interface NewItem extends ItemFields {
  /** A client reference that other items of the same batch may name in dependsOn or parentId. */
  ref?: string;
}

/** Every doctrine slug linked must name an entry on the board (of any status: a rejected one stays and may be ratified again). */
function checkDoctrine(board: Board, slugs: Iterable<string>): void {
  const [slug] = missingDoctrine(board, slugs);
  if (slug !== undefined)
    throw new BoardError('DOCTRINE_LINK_NOT_FOUND', `No doctrine entry "${slug}" on this board.`, { slug });
}

/**
 * The first item carrying `label`, a live one before a cancelled one. Reads every item: only a
 * `once` create asks (an operator's promotion of feedback), never the agents' hot path.
 */
function labelled(board: Board, label: string): BoardItem | null {
  let found: BoardItem | null = null;
  for (const item of board.items.values()) {
    if (!item.labels.includes(label)) continue;
    if (!found || (found.state === 'cancelled' && item.state !== 'cancelled')) found = item;
    if (found.state !== 'cancelled') break;
  }
  return found;
}

/**
 * Creates items atomically (all or none), wiring batch refs to the work ids they receive. With
 * `once` (a label the new items carry), nothing is created when an item already carries it: that
 * item is the reply, so two creates racing for the same thing make one item.
 */
export function createItems(inputs: NewItem[], actor: string, once?: string): Decide<BoardItem[]> {
  return patched((board, now) => {
    const existing = once === undefined ? null : labelled(board, once);
    if (existing) return { board, events: [], reply: [existing] };
    checkDoctrine(
      board,
      inputs.flatMap((i) => i.doctrine),
    );
    const byRef = new Map<string, string>();
    inputs.forEach((input, i) => {
      if (input.ref === undefined) return;
      if (byRef.has(input.ref))
        throw new BoardError('INVALID_INPUT', `ref ${input.ref} is used twice in the batch.`, {
          field: `body.items.${i}.ref`,
        });
      byRef.set(input.ref, workIdOf(board.nextWorkSeq + i));
    });
    const resolve = (id: string) => byRef.get(id) ?? id;
    const fields: Record<string, ItemFields> = {};
    inputs.forEach((input, i) => {
      const { ref: _ref, ...rest } = input;
      fields[workIdOf(board.nextWorkSeq + i)] = {
        ...rest,
        dependsOn: [...new Set(rest.dependsOn.map(resolve))],
        parentId: rest.parentId === null ? null : resolve(rest.parentId),
      };
    });
    const problem = checkGraph(board, fields);
    if (problem) throw new BoardError(problem.code, problem.message, {});
    const draft = new BoardDraft(board);
    draft.nextWorkSeq += inputs.length;
    const created = addItems(draft, fields, now);
    const events = created.map((item): NewEvent => ({
      type: 'item.created',
      actor,
      workId: item.workId,
      data: { title: item.title, state: item.state, dependsOn: item.dependsOn },
    }));
    return { board: draft.finish(), events, reply: created };
  });
}

export type ItemPatch = Partial<
  Pick<
    ItemFields,
    | 'title'
    | 'description'
    | 'type'
    | 'priority'
    | 'labels'
    | 'criteria'
    | 'spec'
    | 'doctrine'
    | 'dependsOn'
    | 'parentId'
    | 'verify'
  >
>;

/** An edited item, and whether the edit took its verify gate off (required to none): that is audited, like an override. */
export interface PatchReply {
  item: BoardItem;
  gateLowered: boolean;
}

/**
 * Edits an item's fields at its expected version. New dependencies obey the graph rules and move
 * the item between pending and ready as they require; the verify gate changes only before work,
 * and only a caller that `mayLowerGate` (an admin: src/board/board-access.ts enterEdit) takes it
 * from required to none, since that passes the item without its independent verifier: its
 * `item.updated` event then says `gateLowered`, so the board's home audits it whatever becomes
 * of the answer (src/board/override-audit.ts).
 */
export function patchItem(
  workId: string,
  changes: ItemPatch,
  expectedVersion: number | undefined,
  actor: string,
  mayLowerGate = false,
): Decide<PatchReply> {
  return patched((board, now) => {
    const item = itemOr404(board, workId);
    if (expectedVersion !== undefined && expectedVersion !== item.version)
      throw new BoardError('VERSION_MISMATCH', `${workId} is at version ${item.version}.`, {
        workId,
        version: item.version,
      });
    const gateLowered = changes.verify === 'none' && item.verify === 'required';
    if (gateLowered && !mayLowerGate)
      throw new BoardError(
        'ROLE_REQUIRED',
        `Taking the verify gate off ${workId} needs the admin role on the board (an operator may pass it with POST /api/items/${workId}/override once submitted).`,
        { workId, needed: 'admin', field: 'body.verify' },
      );
    if (changes.doctrine !== undefined) checkDoctrine(board, changes.doctrine);
    if (
      changes.verify !== undefined &&
      changes.verify !== item.verify &&
      !['pending', 'ready', 'blocked'].includes(item.state)
    ) {
      throw new BoardError(
        'INVALID_TRANSITION',
        `The verify gate of ${workId} cannot change while it is ${item.state}.`,
        { workId, state: item.state, allowed: [] },
      );
    }
    const dependsOn = changes.dependsOn ? [...new Set(changes.dependsOn)] : item.dependsOn;
    const parentId = changes.parentId === undefined ? item.parentId : changes.parentId;
    if (changes.dependsOn !== undefined || changes.parentId !== undefined) {
      const problem = checkGraph(board, { [workId]: { dependsOn, parentId } });
      if (problem) throw new BoardError(problem.code, problem.message, {});
    }
    const life = changes.verify !== undefined ? { ...item.life, verify: changes.verify } : item.life;
    const draft = new BoardDraft(board);
    draft.put({ ...item, ...changes, dependsOn, parentId, life, updatedAt: now, version: item.version + 1 });
    const fields = Object.keys(changes);
    const events: NewEvent[] = [
      { type: 'item.updated', actor, workId, data: gateLowered ? { fields, gateLowered } : { fields } },
    ];
    const done = dependsOn.every((d) => draft.items.get(d)?.state === 'done');
    const relock =
      item.state === 'ready' && !done ? 'DEP_REOPENED' : item.state === 'pending' && done ? 'DEPS_DONE' : null;
    if (relock) {
      const r = applyEvent(draft, workId, { type: relock });
      if (r.ok) events.push(...eventsOf(r.changes, actor));
      const moved = draft.items.get(workId)!;
      if (moved.state === 'ready' && item.state !== 'ready') draft.put({ ...moved, readyAt: now });
    }
    return { board: draft.finish(), events, reply: { item: draft.items.get(workId)!, gateLowered } };
  });
}

/** A comment is an event on the item: ordered with everything else, never a change of state. */
export function comment(workId: string, text: string, actor: string): Decide<{ workId: string }> {
  return (board) => {
    itemOr404(board, workId);
    return { board, events: [{ type: 'item.comment', actor, workId, data: { text } }], reply: { workId } };
  };
}

/** Puts the named items at the head of the priority chain, in the given order. */
export function reorder(workIds: string[], actor: string): Decide<{ order: string[] }> {
  return patched((board, now) => {
    for (const id of workIds) itemOr404(board, id);
    const firstRank = Math.min(0, rankBounds(board).min) - workIds.length;
    const draft = new BoardDraft(board);
    workIds.forEach((id, i) => {
      const item = draft.items.get(id)!;
      draft.put({ ...item, rank: firstRank + i, updatedAt: now, version: item.version + 1 });
    });
    return {
      board: draft.finish(),
      events: [{ type: 'items.reordered', actor, workId: null, data: { order: workIds } }],
      reply: { order: workIds },
    };
  });
}
