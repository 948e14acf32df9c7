// One audit row, with an id of its own: a client's X-Request-Id may repeat, so it goes in the
// row's data and never into its key (a repeated id would make the second insert fail after the
// change it records was applied). The row says where the request came from: its id, and the
// client's address as the per-address budgets see it (through trusted proxies only).
import { randomUUID } from 'node:crypto';
import type { RequestContext } from './request-context.js';
import type { AuditRecord, RequestOrigin } from '../store/ports/store.js';

export type { RequestOrigin };

export const originOf = (
  ctx: Pick<RequestContext, 'requestId' | 'remoteAddress'> & Partial<Pick<RequestContext, 'identity'>>,
): RequestOrigin => {
  const impersonation = ctx.identity?.kind === 'session' ? ctx.identity.impersonation : undefined;
  return {
    requestId: ctx.requestId,
    address: ctx.remoteAddress,
    ...(impersonation && { impersonatedBy: impersonation.operatorId }),
  };
};

export interface AuditInput {
  /** A key of the row's own, when it must be one (e.g. `<board>:device:<uuid>`); a fresh uuid otherwise. */
  id?: string;
  at: number;
  actor: string;
  action: string;
  projectId: string | null;
  /** Null where no request is known (a claim held by an earlier version, finished by the sweep). */
  origin: RequestOrigin | null;
  /** What the change was done to (`account:<id>`, `token:<id>`, …), for the operators' audit filter. */
  target?: string;
  data?: Record<string, unknown>;
}

export function auditRow(input: AuditInput): AuditRecord {
  const row: AuditRecord = {
    _id: input.id ?? randomUUID(),
    version: 1,
    at: input.at,
    actor: input.actor,
    action: input.action,
    projectId: input.projectId,
    data: { ...input.data, ...input.origin },
  };
  if (input.target !== undefined) row.target = input.target;
  return row;
}
