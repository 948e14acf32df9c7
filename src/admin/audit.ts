// Every operator action appends one audit row (DOMAIN.md "Operators"): the operator, the action
// (`admin.<name>`), its target, the reason (required of destructive actions by their schemas), the
// request's id and client address, and the board when the action concerns one.
import type { AuditRecord, Store } from '../../store/ports/store.js';
import { auditRow, originOf } from '../audit-row.js';
import type { RequestContext } from '../request-context.js';

/** What an operator's action needs of its request: who, which request, from where, when. */
export type OperatorCtx = Pick<RequestContext, 'identity' | 'requestId' | 'remoteAddress' | 'now'>;

export interface OperatorAction {
  /** Without the `admin.` prefix, e.g. `revoke`, `impersonate`, `refund`. */
  action: string;
  /** `account:<id>`, `board:<id>`, `token:<id>`, `event:<id>`, `allowlist:<value>`, … */
  target: string | null;
  projectId?: string | null;
  reason?: string | null;
  data?: Record<string, unknown>;
}

export function operatorAuditRow(ctx: OperatorCtx, action: OperatorAction): AuditRecord {
  const row = auditRow({
    at: ctx.now,
    actor: ctx.identity!.principal,
    action: `admin.${action.action}`,
    projectId: action.projectId ?? null,
    origin: originOf(ctx),
    data: { ...action.data, reason: action.reason ?? null, operator: true },
  });
  return { ...row, target: action.target };
}

/** Appends the row; an action whose row cannot be written has failed (callers write it before answering). */
export async function auditOperatorAction(
  store: Pick<Store, 'audit'>,
  ctx: OperatorCtx,
  action: OperatorAction,
): Promise<AuditRecord> {
  const row = operatorAuditRow(ctx, action);
  await store.audit.insert(row);
  return row;
}
