// The audit rows of the verify gate's bypasses: an operator's override (DOMAIN.md "operator
// override (reason) | done | audited"), and an admin taking the gate off an item (required to
// none), which passes it without its independent verifier as surely. The route writes the row with
// the request's origin once the board answers; the board's home writes it too from the committed
// event (`item.overridden`, or `item.updated` saying `gateLowered`), a moment later, so a bypass
// whose answer was lost (the route never reached its write, and nobody retries) is audited all the
// same. Keyed by the change (the override's time on the item; the item's version after the
// lowering): both writes, and a repeat's, are one row, the first to land kept.
import type { Logger } from 'pino';
import { auditRow } from '../audit-row.js';
import type { AuditRecord, CommittedEvent, RequestOrigin, Store } from '../../store/ports/store.js';
import { auditCommitted } from './committed-audit.js';

/** How long after the commit the home writes a bypass's row: the route's own write (with its origin) lands first. */
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

/** The row of `workId`'s verify gate taken off by `actor`, the item at `version` after it. */
export function gateLoweredAuditRow(
  boardId: string,
  lowered: { workId: string; actor: string; version: number; at: number },
  origin: RequestOrigin | null,
): AuditRecord {
  return auditRow({
    id: `${boardId}:item.gate.lower:${lowered.workId}:${lowered.version}`,
    at: lowered.at,
    actor: lowered.actor,
    action: 'item.gate.lower',
    projectId: boardId,
    origin,
    data: { workId: lowered.workId, from: 'required', to: 'none' },
  });
}

/** The row a committed event calls for, when it is a bypass of the verify gate. */
function bypassRow(boardId: string, e: CommittedEvent): AuditRecord | null {
  if (!e.workId) return null;
  if (e.type === 'item.overridden')
    return overrideAuditRow(
      boardId,
      { workId: e.workId, actor: e.actor, reason: String(e.data.reason), at: e.at },
      null,
    );
  const version = (e.data.item as { version?: unknown } | undefined)?.version;
  if (e.type === 'item.updated' && e.data.gateLowered === true && typeof version === 'number')
    return gateLoweredAuditRow(boardId, { workId: e.workId, actor: e.actor, version, at: e.at }, null);
  return null;
}

/** A commit listener of the board's home: each bypass of the verify gate committed is audited from its event, whatever became of its answer. */
export function auditGateBypasses(
  store: Pick<Store, 'audit'>,
  logger: Pick<Logger, 'error'>,
): (boardId: string, events: readonly CommittedEvent[]) => void {
  return (boardId, events) => {
    for (const e of events) {
      const row = bypassRow(boardId, e);
      if (row)
        setTimeout(() => void auditCommitted(store, row, logger, row.action), OVERRIDE_AUDIT_FALLBACK_MS).unref();
    }
  };
}
