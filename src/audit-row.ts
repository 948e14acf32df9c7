// One audit row, with an id of its own: a client's X-Request-Id may repeat, so it goes in the
// row's data and never into its key (a repeated id would make the second insert fail after the
// change it records was applied).
import { randomUUID } from 'node:crypto';
import type { AuditRecord } from '../store/ports/store.js';

export interface AuditInput {
  at: number;
  actor: string;
  action: string;
  projectId: string | null;
  requestId: string;
  data?: Record<string, unknown>;
}

export function auditRow(input: AuditInput): AuditRecord {
  return { _id: randomUUID(), version: 1, at: input.at, actor: input.actor, action: input.action, projectId: input.projectId, data: { ...input.data, requestId: input.requestId } };
}
