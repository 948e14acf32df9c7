// Board surfaces: which board a request acts on, whether its role suffices, whether a resource
// token covers the operation, and the one mapping from actor outcomes to registry errors.
import { BoardBusyError, BoardMissingError, type BoardActor } from '../../actors/board-actor.js';
import type { BoardRegistry } from '../../actors/registry.js';
import { heldBy } from '../../machines/board-queries.js';
import { BoardError, type BoardErrorCode } from '../../machines/board-error.js';
import { RewindError } from '../../machines/restore-point.js';
import { atLeast, requireRole } from '../auth/project-selection.js';
import type { Role } from '../auth/identity.js';
import { AppError } from '../errors/app-error.js';
import type { ErrorCode } from '../errors/registry.js';
import type { RequestContext } from '../request-context.js';
import type { BoardCommand, ReplyOf } from './commands.js';
import type { BoardRead, BoardView } from './visibility.js';
import { lookHolding } from './feed/look.js';

/** Where a board's commands are decided: this node's actor, or the board's home node (src/cluster/). */
export interface CommandRoute {
  /** Rejects with the registry error the caller answers: a board's refusal mapped by toAppError. */
  ask(boardId: string, command: BoardCommand): Promise<unknown>;
}

/** The operation groups a resource token may name. */
export type BoardGroup = 'items' | 'claims' | 'shouts' | 'status' | 'doctrine' | 'spec' | 'feedback' | 'history';

export interface BoardCall {
  /** The board's actor on this node, for reads here: activated when first asked for, so a command decided on the board's home (perhaps another node) activates nothing here. */
  readonly actor: BoardActor;
  boardId: string;
  principal: string;
  role: Role;
  /**
   * The work ids a resource token limits this call to (it names items, not the operation's group);
   * null when the call may touch the whole board. Decisions that find their item pass it on.
   */
  within: readonly string[] | null;
}

const WORK_ID = /^W-\d+$/;

export class BoardAccess {
  constructor(
    private readonly registry: BoardRegistry,
    private readonly commands: CommandRoute,
  ) {}

  /** The selected board's actor, after the role and resource-token checks, for an operation on `workId` or on the group. */
  enter(ctx: RequestContext, need: Role, group: BoardGroup, workId?: string): BoardCall {
    return this.check(ctx, need, group, workId, false);
  }

  /**
   * For an edit of `workId`'s fields (member), with whether the caller's role also lets it take the
   * item's verify gate off (admin: passing an item without its independent verifier is an admin's
   * move, DOMAIN.md). The board decides whether an edit does that, knowing the gate as it stands.
   */
  enterEdit(ctx: RequestContext, workId: string): { call: BoardCall; mayLowerGate: boolean } {
    const call = this.check(ctx, 'member', 'items', workId, false);
    return { call, mayLowerGate: atLeast(call.role, 'admin') };
  }

  /**
   * For operations that find their item on the board: pull-next, and renew, release and submit by
   * lease id. A resource token naming work ids (not the group) enters limited to them, in `within`,
   * and the decision refuses any other item.
   */
  enterWithin(ctx: RequestContext, need: Role, group: BoardGroup): BoardCall {
    return this.check(ctx, need, group, undefined, true);
  }

  /**
   * The selected board for a read of its `what` (about `workId` when given), with what the caller
   * may see of it (the leases it holds included), as the board's feed decides for sockets too
   * (src/board/feed/look.ts). A read the view takes nothing of is refused; the rest is answered as
   * the view sees it.
   */
  async look(ctx: RequestContext, what: BoardRead, workId?: string): Promise<BoardCall & { view: BoardView }> {
    const project = ctx.project!;
    const identity = ctx.identity!;
    const call = this.callOn(project.id, identity.principal, project.role, null);
    // The items whose lease it holds are its to read while it holds them: the board says which.
    const held = async () => heldBy((await call.actor.read()).board, identity.principal).map((item) => item.workId);
    const { view, refused } = await lookHolding(identity, project.role, [what], held, workId);
    if (refused)
      throw new AppError(
        'PROJECT_SCOPE_DENIED',
        `This resource token covers ${(identity.kind === 'token' && identity.resources?.join(', ')) || 'nothing'}; not ${workId ?? `the board's ${what}`}.`,
      );
    return Object.assign(call, { view });
  }

  /** A board named in the path rather than selected (PATCH /api/projects/{projectId}), after the caller's role on it was checked. */
  enterNamed(project: { id: string; role: Role }, principal: string): BoardCall {
    return this.callOn(project.id, principal, project.role, null);
  }

  private check(
    ctx: RequestContext,
    need: Role,
    group: BoardGroup,
    workId: string | undefined,
    findsItem: boolean,
  ): BoardCall {
    const project = ctx.project!;
    const identity = ctx.identity!;
    requireRole(project.role, need);
    let within: string[] | null = null;
    if (identity.kind === 'token' && identity.scope === 'resource') {
      const resources = identity.resources ?? [];
      if (!resources.includes(group)) {
        within = resources.filter((r) => WORK_ID.test(r));
        const covered = workId !== undefined ? within.includes(workId) : findsItem && within.length > 0;
        if (!covered)
          throw new AppError(
            'PROJECT_SCOPE_DENIED',
            `This resource token covers ${resources.join(', ')}; not ${workId ?? group}.`,
          );
      }
    }
    return this.callOn(project.id, identity.principal, project.role, within);
  }

  private callOn(boardId: string, principal: string, role: Role, within: readonly string[] | null): BoardCall {
    const registry = this.registry;
    return {
      boardId,
      principal,
      role,
      within,
      get actor() {
        return registry.get(boardId);
      },
    };
  }

  /** Has the board decide a command (on its home); a refusal comes mapped to its registry code (toAppError) by the route. */
  ask<C extends BoardCommand>(call: BoardCall, command: C): Promise<ReplyOf<C>> {
    return this.commands.ask(call.boardId, command) as Promise<ReplyOf<C>>;
  }
}

/** Every code the board refuses with is a registry code: adding one the registry lacks fails to compile here. */
const registered = (code: BoardErrorCode): ErrorCode => code;

export function toAppError(e: unknown): unknown {
  if (e instanceof BoardError) return new AppError(registered(e.code), e.message, e.details);
  if (e instanceof RewindError) return new AppError(e.code, e.message, e.details);
  if (e instanceof BoardBusyError) return new AppError('BOARD_BUSY', undefined, undefined, { 'retry-after': '1' });
  if (e instanceof BoardMissingError) return new AppError('PROJECT_SCOPE_DENIED');
  return e;
}
