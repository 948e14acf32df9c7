// The board's commands as data: what a route asks of a board, in a form that can cross to the
// board's home node (src/cluster/) and be decided there. `decisionOf` turns one into the pure
// decision of machines/board-commands.ts (or lease-commands.ts) the home's actor runs; every reply
// is plain JSON.
import { comment, createItems, itemEvent, overrideItem, patchItem, reorder } from '../../machines/board-commands.js';
import { claim, expireDue, leaseAction, progress, submit } from '../../machines/lease-commands.js';
import type { ItemPatch, NewItem, OverrideReply, PatchReply } from '../../machines/board-commands.js';
import type { ClaimInput, LeaseGrant, LeaseReply, Within } from '../../machines/lease-commands.js';
import type { BoardEvent, BoardItem } from '../../machines/board.js';
import type { DoctrineView } from '../../machines/board-entries.js';
import {
  createClause,
  doctrineAction,
  patchClause,
  proposeDoctrine,
  type ClausePatch,
  type DoctrineAction,
  type DoctrineProposal,
  type DoctrineReply,
  type LinkedClause,
} from '../../machines/doctrine-commands.js';
import type { Decide } from '../../machines/board-decision.js';
import { setPaused, unlessPaused, type PauseReply } from '../../machines/board-pause.js';
import { rewindDecision, type RewindCommand, type RewindReply } from './rewind-decision.js';
import type { PointPorts } from './restore-points.js';

/** The most items one create command makes (POST /api/items/batch; DOMAIN.md "Items"): all or none. */
export const BATCH_MAX = 500;
/** The most items one item depends on (src/routes/board-schemas.ts): with its parent, the links it names. */
export const DEPENDS_MAX = 100;

type WithoutNow<E> = E extends unknown ? Omit<E, 'now'> : never;
/** An item event as a route names it; the actor adds the time it decides at. */
export type ItemEventInput = WithoutNow<BoardEvent>;

export type BoardCommand =
  | { kind: 'claim'; input: ClaimInput }
  | {
      kind: 'lease';
      input: { principal: string; leaseId: string; action: 'renew' | 'release'; ttlMs: number | null; within?: Within };
    }
  | { kind: 'submit'; input: { principal: string; leaseId: string; head: string; within?: Within } }
  | { kind: 'progress'; input: { principal: string; workId: string; leaseId: string; note: string } }
  | { kind: 'event'; workId: string; actor: string; event: ItemEventInput }
  /** An operator's pass of the verify gate, by `principal`; a repeat of its own answers as the first did. */
  | { kind: 'override'; workId: string; principal: string; reason: string }
  /** `once`: a label the items carry; when an item on the board has it already, that item is the reply and nothing is made. */
  | { kind: 'create'; items: NewItem[]; actor: string; once?: string }
  /** `mayLowerGate`: the caller's role lets it take the verify gate off (BoardAccess.enterEdit); absent, it does not. */
  | {
      kind: 'patch';
      workId: string;
      changes: ItemPatch;
      expectedVersion?: number;
      actor: string;
      mayLowerGate?: boolean;
    }
  | { kind: 'comment'; workId: string; text: string; actor: string }
  | { kind: 'reorder'; workIds: string[]; actor: string }
  | { kind: 'expire' }
  | { kind: 'propose-doctrine'; input: DoctrineProposal; actor: string }
  | { kind: 'doctrine'; slug: string; action: DoctrineAction; actor: string }
  | { kind: 'create-clause'; input: { title: string; text: string }; actor: string }
  | { kind: 'patch-clause'; input: ClausePatch; actor: string }
  /** Pauses (true) or resumes (false) the board; idempotent. */
  | { kind: 'pause'; paused: boolean; actor: string }
  | RewindCommand;

export type CommandKind = BoardCommand['kind'];

/** What each command answers. */
export interface Replies {
  claim: LeaseGrant;
  lease: LeaseReply;
  submit: { workId: string; state: string };
  progress: { workId: string; lease: LeaseGrant };
  event: { workId: string; state: string };
  override: OverrideReply;
  create: BoardItem[];
  patch: PatchReply;
  comment: { workId: string };
  reorder: { order: string[] };
  expire: number;
  'propose-doctrine': DoctrineView;
  doctrine: DoctrineReply;
  'create-clause': LinkedClause;
  'patch-clause': LinkedClause;
  rewind: RewindReply;
  pause: PauseReply;
}

export type ReplyOf<C extends BoardCommand> = Replies[C['kind']];

const COMMAND_KINDS: ReadonlySet<string> = new Set<CommandKind>([
  'claim',
  'lease',
  'submit',
  'progress',
  'event',
  'override',
  'create',
  'patch',
  'comment',
  'reorder',
  'expire',
  'propose-doctrine',
  'doctrine',
  'create-clause',
  'patch-clause',
  'pause',
  'rewind',
]);

/**
 * What a paused board refuses with 409 BOARD_PAUSED (DOMAIN.md "Pausing a board"): claims and
 * every change to the work graph or an item's state. Renew and release, comments, lease expiry,
 * doctrine and spec (not part of the graph a rewind swaps), the pause itself and the rewind go on.
 * The one pause list: a route that `sends` one of these lists BOARD_PAUSED (src/http/route.ts
 * defineRoute), and the error registry's operations for it are those routes.
 */
export const REFUSED_WHILE_PAUSED: ReadonlySet<CommandKind> = new Set<CommandKind>([
  'claim',
  'submit',
  'progress',
  'event',
  'override',
  'create',
  'patch',
  'reorder',
]);

/** A command's shape as far as routing needs it (a forwarded one was validated on the node it entered, and is signed). */
export const isBoardCommand = (value: unknown): value is BoardCommand =>
  typeof value === 'object' && value !== null && COMMAND_KINDS.has((value as { kind?: unknown }).kind as string);

/** The decision a command stands for, refused on a paused board when REFUSED_WHILE_PAUSED names it. Only a rewind reads anything (its restore points) first. */
export function decisionOf(command: BoardCommand, points: PointPorts): Decide<unknown> | Promise<Decide<unknown>> {
  if (command.kind === 'rewind') return rewindDecision(points, command);
  const decide = decisionFor(command);
  return REFUSED_WHILE_PAUSED.has(command.kind) ? unlessPaused(decide) : decide;
}

function decisionFor(command: Exclude<BoardCommand, RewindCommand>): Decide<unknown> {
  switch (command.kind) {
    case 'claim':
      return claim(command.input);
    case 'lease':
      return leaseAction(command.input);
    case 'submit':
      return submit(command.input);
    case 'progress':
      return progress(command.input);
    case 'event': {
      const { event } = command;
      return itemEvent(command.workId, command.actor, (now) => ({ ...event, now }) as BoardEvent);
    }
    case 'override':
      return overrideItem(command.workId, command.principal, command.reason);
    case 'create':
      return createItems(command.items, command.actor, command.once);
    case 'patch':
      return patchItem(
        command.workId,
        command.changes,
        command.expectedVersion,
        command.actor,
        command.mayLowerGate === true,
      );
    case 'comment':
      return comment(command.workId, command.text, command.actor);
    case 'reorder':
      return reorder(command.workIds, command.actor);
    case 'expire':
      return expireDue();
    case 'propose-doctrine':
      return proposeDoctrine(command.input, command.actor);
    case 'doctrine':
      return doctrineAction(command.slug, command.actor, command.action);
    case 'create-clause':
      return createClause(command.input, command.actor);
    case 'patch-clause':
      return patchClause(command.input, command.actor);
    case 'pause':
      return setPaused(command.paused, command.actor);
  }
}
