// An operator's socket (DOMAIN.md "Operators"): opened with the own session of an operator's
// account (listed in OPERATOR_EMAILS and confirmed, as the gate decides: never a token, never an
// impersonation), it may watch any board read-only, member or not, and the firehose. Each such
// subscription writes one audit row before anything flows.
import type { Identity } from '../auth/identity.js';
import type { RequestOrigin } from '../audit-row.js';
import type { Store } from '../../store/ports/store.js';

/** Who acted and from which request, as an operator's audit row records it. */
export interface OperatorAuditCtx {
  identity: Identity;
  requestId: string;
  remoteAddress: string;
  now: number;
}

/** One operator action, without the `admin.` prefix its row's action gets. */
export interface OperatorAuditAction {
  action: string;
  target: string;
  projectId: string | null;
  data?: Record<string, unknown>;
}

export interface OperatorAccessDeps {
  store: Pick<Store, 'projects' | 'accounts'>;
  /** Appends an operator action's audit row (src/admin/audit.ts auditOperatorAction, given by the composition root); rejects when it was not written. */
  audit(ctx: OperatorAuditCtx, action: OperatorAuditAction): Promise<unknown>;
  /** Whether the account is an operator now: OperatorGate.isOperator, the one rule (src/admin/gate.ts), read afresh each time; rejects when the store cannot say. */
  isOperator(accountId: string): Promise<boolean>;
  /** The upgrade request that opened the socket of this credential, for its audit rows. */
  originOf(identity: Identity): RequestOrigin | undefined;
  clock: () => number;
}

/** How an operator watches a board it may not otherwise see. */
export interface OperatorView {
  name: string;
  role: 'operator';
}

/**
 * Whether a socket of this credential may ever be an operator's (the gate asks the rest): only an
 * account's own session is. Only such a socket's upgrade origin is kept for audit rows.
 */
export const mayBeOperator = (identity: Identity): boolean => identity.kind === 'session' && !identity.impersonation;

export class OperatorAccess {
  constructor(private readonly deps: OperatorAccessDeps) {}

  /** Whether the socket's credential is an operator's own session now (asked again by Hub.revalidate). */
  async admits(identity: Identity): Promise<boolean> {
    return mayBeOperator(identity) && (await this.deps.isOperator(identity.accountId));
  }

  /** The board as an operator watches it; null for anyone else, and for a board that does not exist. */
  async board(identity: Identity, boardId: string): Promise<OperatorView | null> {
    if (!(await this.admits(identity))) return null;
    const project = await this.deps.store.projects.get(boardId);
    return project && { name: project.name, role: 'operator' };
  }

  /** A board's name as the firehose tags its events with it (null for a board that is gone). */
  async boardName(boardId: string): Promise<string | null> {
    const [project] = await this.deps.store.projects.select({ _id: boardId }, ['name']);
    return project?.name ?? null;
  }

  /** The address of a board's owner, beside its name in the firehose: operators tell boards of different accounts apart by it. */
  async ownerEmail(boardId: string): Promise<string | null> {
    const [project] = await this.deps.store.projects.select({ _id: boardId }, ['ownerId']);
    if (!project) return null;
    const [owner] = await this.deps.store.accounts.select({ _id: project.ownerId }, ['email']);
    return owner?.email ?? null;
  }

  /** The audit row of one subscription: `admin.live.subscribe` for a board, `admin.live.firehose`. */
  async audit(
    identity: Identity,
    what: { action: 'subscribe' | 'firehose'; target: string; projectId?: string; data?: Record<string, unknown> },
  ): Promise<void> {
    const origin = this.deps.originOf(identity);
    const ctx = {
      identity,
      requestId: origin?.requestId ?? 'ws',
      remoteAddress: origin?.address ?? 'unknown',
      now: this.deps.clock(),
    };
    await this.deps.audit(ctx, {
      action: `live.${what.action}`,
      target: what.target,
      projectId: what.projectId ?? null,
      ...(what.data && { data: what.data }),
    });
  }
}
