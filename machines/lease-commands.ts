// The lease decisions of the board: claim (named or pull-next), renew and release, submit, progress,
// and expiry. A lease id is its holder's capability: a stale or foreign one changes nothing, and
// one that ended is told apart (expired, revoked with its reason, or ended by its holder).
import { BoardDraft, HOLDER_ENDINGS, type Board, type BoardEvent, type BoardItem } from './board.js';
import { heldBy, pullNext } from './board-queries.js';
import { itemOr404, move, moved, patched } from './board-commands.js';
import type { Decide } from './board-decision.js';
import { BoardError } from './board-error.js';
import type { Lease } from './item-types.js';
import { iso } from './item-view.js';

/** A lease as its holder sees it (the lease id is the holder's capability: never in events). */
export interface LeaseGrant {
  workId: string;
  leaseId: string;
  purpose: 'work' | 'verify';
  fencingToken: number;
  expiresAt: string;
  renewBy: string;
  hardExpiresAt: string;
}

export function grantOf(workId: string, lease: Lease): LeaseGrant {
  return {
    workId,
    leaseId: lease.leaseId,
    purpose: lease.purpose,
    fencingToken: lease.fencingToken,
    expiresAt: iso(lease.expiresAt),
    renewBy: iso(lease.expiresAt - Math.floor(lease.ttlMs / 2)),
    hardExpiresAt: iso(lease.hardExpiresAt),
  };
}

/** How a lease that is no longer on its item ended, if the board still remembers. */
const endedLease = (board: Board, leaseId: string): { workId: string; reason: string } | null =>
  board.index.ended.get(leaseId) ?? board.retired.find((r) => r.leaseId === leaseId) ?? null;

/** The item holding a live lease, by its id. */
function liveLease(board: Board, leaseId: string): BoardItem | undefined {
  const workId = board.index.leases.get(leaseId);
  return workId === undefined ? undefined : board.items.get(workId);
}

/**
 * Work ids a principal is limited to (a resource token naming items), or null for the whole board.
 * A limited principal claims, renews, releases, progresses and submits those items only.
 */
export type Within = readonly string[] | null;

function keepWithin(within: Within | undefined, workId: string): void {
  if (within && !within.includes(workId))
    throw new BoardError('PROJECT_SCOPE_DENIED', `This credential covers ${within.join(', ')}; not ${workId}.`, {
      workId,
    });
}

/** The item a lease id belongs to; an expired or revoked lease is told apart from a foreign one. */
function leased(board: Board, leaseId: string, principal: string, within: Within = null): BoardItem {
  const item = liveLease(board, leaseId);
  if (item && item.life.lease!.holder === principal) {
    keepWithin(within, item.workId);
    return item;
  }
  const ended = item ? null : endedLease(board, leaseId);
  if (ended?.reason === 'expired')
    throw new BoardError('LEASE_EXPIRED', 'That lease has expired; stop work on the item.', { workId: ended.workId });
  if (ended && HOLDER_ENDINGS.has(ended.reason))
    throw new BoardError('LEASE_NOT_HELD', `That lease ended when its holder ${ended.reason} the item.`, {
      workId: ended.workId,
    });
  if (ended)
    throw new BoardError('LEASE_NOT_HELD', `That lease was revoked (${ended.reason}); stop work on the item.`, {
      workId: ended.workId,
      revoked: true,
      reason: ended.reason,
    });
  throw new BoardError('LEASE_NOT_HELD', 'That lease is not held by you (stale or foreign).', {});
}

/** Expires every lease due at `now`, read from the deadline index (nothing else is visited). */
export function expireDue(): Decide<number> {
  return patched((board, now) => {
    const due: string[] = [];
    board.index.expiries.forRange([-Infinity, ''], [now, '\uffff'], true, (_k, workId) => void due.push(workId));
    if (!due.length) return { board, events: [], reply: 0 };
    const draft = new BoardDraft(board);
    const events = due.flatMap((workId) => move(draft, workId, { type: 'EXPIRE', now }, 'system:lease-scheduler'));
    return { board: draft.finish(), events, reply: events.length };
  });
}

export interface ClaimInput {
  principal: string;
  workId: string | null;
  purpose: 'work' | 'verify';
  ttlMs: number;
  leaseId: string;
  within?: Within;
}

export function claim(input: ClaimInput): Decide<LeaseGrant> {
  return patched((board, now) => {
    // A pull-next repeated by an agent that already holds a lease for this purpose (say, its
    // response was lost) gets that lease back rather than a second item.
    const holding = (i: BoardItem) => i.life.lease!.purpose === input.purpose && i.life.lease!.expiresAt > now;
    const within = input.within;
    const mine = (i: BoardItem) => holding(i) && (!within || within.includes(i.workId));
    if (input.workId !== null) keepWithin(within, input.workId);
    const next = () => pullNext(board, input.principal, input.purpose, within ?? null);
    const target =
      input.workId === null ? (heldBy(board, input.principal).find(mine) ?? next()) : itemOr404(board, input.workId);
    if (!target)
      throw new BoardError('NOTHING_READY', `Nothing is ready for ${input.purpose}.`, { purpose: input.purpose });
    const held = target.life.lease;
    if (held && held.holder === input.principal && held.purpose === input.purpose && held.expiresAt > now)
      return { board, events: [], reply: grantOf(target.workId, held) };
    const claim: BoardEvent = {
      type: 'CLAIM',
      principal: input.principal,
      purpose: input.purpose,
      leaseId: input.leaseId,
      fencingToken: 0,
      ttlMs: input.ttlMs,
      now,
    };
    return moved(board, target.workId, claim, input.principal, (item) => grantOf(item.workId, item.life.lease!));
  });
}

export interface LeaseReply {
  workId: string;
  action: 'renew' | 'release';
  lease: LeaseGrant | null;
  /** The item was blocked, cancelled, superseded, overridden, verified by another or rewound under the holder: stop work. */
  revoked?: true;
  reason?: string;
}

export function leaseAction(input: {
  principal: string;
  leaseId: string;
  action: 'renew' | 'release';
  ttlMs: number | null;
  within?: Within;
}): Decide<LeaseReply> {
  return patched((board, now) => {
    const ended = liveLease(board, input.leaseId) ? null : endedLease(board, input.leaseId);
    if (ended) keepWithin(input.within, ended.workId);
    // A release repeated (its answer lost) is answered as the first was.
    if (ended?.reason === 'released' && input.action === 'release')
      return { board, events: [], reply: { workId: ended.workId, action: 'release', lease: null } };
    if (ended && ended.reason !== 'expired' && !HOLDER_ENDINGS.has(ended.reason))
      return {
        board,
        events: [],
        reply: { workId: ended.workId, action: input.action, lease: null, revoked: true, reason: ended.reason },
      };
    const item = leased(board, input.leaseId, input.principal, input.within);
    const event: BoardEvent =
      input.action === 'renew'
        ? { type: 'RENEW', leaseId: input.leaseId, ttlMs: input.ttlMs ?? item.life.lease!.ttlMs, now }
        : { type: 'RELEASE', leaseId: input.leaseId, now };
    return moved(board, item.workId, event, input.principal, (after) => ({
      workId: after.workId,
      action: input.action,
      lease: after.life.lease ? grantOf(after.workId, after.life.lease) : null,
    }));
  });
}

/**
 * The item a submit repeats (its answer lost: the commit landed), when its lease ended in a
 * submission of the same head by the same principal; a different head is no repeat.
 */
function repeatedSubmit(
  board: Board,
  input: { principal: string; leaseId: string; head: string; within?: Within },
): BoardItem | null {
  const ended = liveLease(board, input.leaseId) ? null : endedLease(board, input.leaseId);
  if (ended?.reason !== 'submitted') return null;
  keepWithin(input.within, ended.workId);
  const item = board.items.get(ended.workId);
  const submission = item?.life.submission;
  return item && submission?.by === input.principal && submission.head === input.head ? item : null;
}

export function submit(input: {
  principal: string;
  leaseId: string;
  head: string;
  within?: Within;
}): Decide<{ workId: string; state: string }> {
  return patched((board, now) => {
    const repeated = repeatedSubmit(board, input);
    if (repeated) return { board, events: [], reply: { workId: repeated.workId, state: repeated.state } };
    const item = leased(board, input.leaseId, input.principal, input.within);
    return moved(
      board,
      item.workId,
      { type: 'SUBMIT', leaseId: input.leaseId, head: input.head, now },
      input.principal,
      (after) => ({ workId: after.workId, state: after.state }),
    );
  });
}

export function progress(input: {
  principal: string;
  workId: string;
  leaseId: string;
  note: string;
}): Decide<{ workId: string; lease: LeaseGrant }> {
  return patched((board, now) => {
    const item = leased(board, input.leaseId, input.principal);
    if (item.workId !== input.workId)
      throw new BoardError('LEASE_NOT_HELD', `That lease is for ${item.workId}, not ${input.workId}.`, {});
    const draft = new BoardDraft(board);
    const events = move(draft, item.workId, { type: 'PROGRESS', leaseId: input.leaseId, now }, input.principal);
    const updated = { ...draft.items.get(item.workId)!, progress: { note: input.note, by: input.principal, at: now } };
    draft.put(updated);
    return {
      board: draft.finish(),
      events: [
        ...events,
        { type: 'item.progress', actor: input.principal, workId: item.workId, data: { note: input.note } },
      ],
      reply: { workId: item.workId, lease: grantOf(item.workId, updated.life.lease!) },
    };
  });
}
