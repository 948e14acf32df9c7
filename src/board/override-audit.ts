// The audit row of an operator's override of the verify gate (DOMAIN.md "operator override
// (reason) | done | audited"). The route writes it with the request's origin once the board
// answers; the board's home writes it too from the committed `item.overridden` event, a moment
// later, so an override whose answer was lost (the route never reached its write, and nobody
// retries) is audited all the same. Keyed by the override (its time on the item): both writes,
// and a repeat's, are one row, the first to land kept.
import type { Logger } from 'pino';
import { auditRow } from '../audit-row.js';
import type { AuditRecord, CommittedEvent, RequestOrigin, Store } from '../../store/ports/store.js';
import { auditCommitted } from './committed-audit.js';

/** How long after the commit the home writes the row: the route's own write (with its origin) lands first. */
export const OVERRIDE_AUDIT_FALLBACK_MS = 2000;

/** The row of `workId`'s override by `actor` at `at` (the override's time on the item). */
export function overrideAuditRow(
  boardId: string,
  override: { workId: string; actor: string; reason: string; at: number },
  origin: RequestOrigin | null,
): AuditRecord {
  return auditRow({
    id: `${boardId}:item.override:${override.workId}:${override.at}`,
    at: override.at,
    actor: override.actor,
    action: 'item.override',
    projectId: boardId,
    origin,
    data: { workId: override.workId, reason: override.reason },
  });
}

/** A commit listener of the board's home: each override committed is audited from its event, whatever became of its answer. */
export function auditOverrides(
  store: Pick<Store, 'audit'>,
  logger: Pick<Logger, 'error'>,
): (boardId: string, events: readonly CommittedEvent[]) => void {
  return (boardId, events) => {
    for (const e of events) {
      if (e.type !== 'item.overridden' || !e.workId) continue;
      const row = overrideAuditRow(
        boardId,
        { workId: e.workId, actor: e.actor, reason: String(e.data.reason), at: e.at },
        null,
      );
      setTimeout(() => void auditCommitted(store, row, logger, 'item.override'), OVERRIDE_AUDIT_FALLBACK_MS).unref();
    }
  };
}
