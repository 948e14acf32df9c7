// The spec on a board (DOMAIN.md "Doctrine and spec"): clauses with server-assigned ids `S-<n>`,
// status draft, accepted or retired, and a version every edit must name. Anyone on the board
// reads them (with the items linking each); admins write them, decided in the board's actor.
import type { SpecStatus } from '../../machines/board-entries.js';
import { clauseOr404, linkedClause, type LinkedClause } from '../../machines/doctrine-commands.js';
import { AppError } from '../errors/app-error.js';
import type { RequestContext } from '../request-context.js';
import { toAppError, type BoardAccess } from './board-access.js';

export const CLAUSE_ID = /^S-[1-9]\d{0,8}$/;

export interface ClauseEdit {
  version: number;
  title?: string;
  text?: string;
  status?: SpecStatus;
}

/**
 * A clause id from a path: one that cannot name a clause is answered like a missing one, and at the
 * same point (after the role and the token's groups are checked, as a clause's existence is).
 */
function clauseParam(raw: string | undefined): string {
  if (!raw || !CLAUSE_ID.test(raw))
    throw new AppError('SPEC_CLAUSE_NOT_FOUND', 'Clause ids look like S-3.', { clauseId: raw ?? null });
  return raw;
}

/** The spec operations of one request's board. */
export class SpecDesk {
  constructor(private readonly boards: BoardAccess) {}

  async list(ctx: RequestContext): Promise<{ clauses: LinkedClause[] }> {
    const call = this.boards.enter(ctx, 'viewer', 'spec');
    const { board } = await call.actor.read();
    return { clauses: [...board.spec.values()].map((c) => linkedClause(board, c)) };
  }

  /** `clauseId` as the path gave it: checked once the caller may read at all. */
  async get(ctx: RequestContext, clauseId: string | undefined): Promise<LinkedClause> {
    const call = this.boards.enter(ctx, 'viewer', 'spec');
    const id = clauseParam(clauseId);
    const { board } = await call.actor.read();
    try {
      return linkedClause(board, clauseOr404(board, id));
    } catch (e) {
      throw toAppError(e);
    }
  }

  create(ctx: RequestContext, input: { title: string; text: string }): Promise<LinkedClause> {
    const call = this.boards.enter(ctx, 'admin', 'spec');
    return this.boards.ask(call, { kind: 'create-clause', input, actor: call.principal });
  }

  /** `clauseId` as the path gave it: checked once the caller may change the spec at all. */
  patch(ctx: RequestContext, clauseId: string | undefined, edit: ClauseEdit): Promise<LinkedClause> {
    const call = this.boards.enter(ctx, 'admin', 'spec');
    const input = { clauseId: clauseParam(clauseId), ...edit };
    return this.boards.ask(call, { kind: 'patch-clause', input, actor: call.principal });
  }
}
