// Pausing a board (DOMAIN.md "Pausing a board"): owners and admins pause and resume it through the
// board's own decision (machines/board-pause.ts), so the flag holds on every node in the board's
// commit order; each change is audited once it is committed. Which commands a paused board refuses
// is src/board/commands.ts REFUSED_WHILE_PAUSED, and the routes that answer BOARD_PAUSED follow it.
import type { Logger } from 'pino';
import type { Board } from '../../machines/board.js';
import { auditRow, type RequestOrigin } from '../audit-row.js';
import type { Store } from '../../store/ports/store.js';
import type { BoardAccess, BoardCall } from './board-access.js';
import { auditCommitted } from './committed-audit.js';

/** The pause as GET /api/status and the PATCH reply show it. */
export interface PauseView {
  paused: boolean;
  /** Who paused the board (a principal), null while it runs. */
  pausedBy: string | null;
  pausedAt: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const pauseViewOf = (board: Board): PauseView => ({
  paused: board.paused !== null,
  pausedBy: board.paused?.by ?? null,
  pausedAt: iso(board.paused?.at ?? null),
});

/**
 * Pauses or resumes the board the call names. Idempotent: a board already as asked answers as it
 * is and writes nothing; a change logs board.paused or board.resumed and is audited (board.pause,
 * board.resume; one row per logged event, keyed by its seq), the row retried until written since
 * the change stands.
 */
export async function setBoardPaused(
  deps: { boards: BoardAccess; store: Pick<Store, 'audit'>; logger: Pick<Logger, 'error'> },
  call: BoardCall,
  paused: boolean,
  origin: RequestOrigin,
): Promise<PauseView> {
  const reply = await deps.boards.ask(call, { kind: 'pause', paused, actor: call.principal });
  if (reply.changed) {
    const action = paused ? 'board.pause' : 'board.resume';
    // Keyed by the logged event: commands decided in one batch share `at`, never a seq.
    const row = auditRow({
      id: `${call.boardId}:${action}:${reply.seq ?? reply.at}`,
      at: reply.at,
      actor: call.principal,
      action,
      projectId: call.boardId,
      origin,
      data: {},
    });
    await auditCommitted(deps.store, row, deps.logger, action);
  }
  return { paused: reply.paused, pausedBy: reply.pausedBy, pausedAt: iso(reply.pausedAt) };
}
