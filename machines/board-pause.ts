// Pausing a board (DOMAIN.md "Pausing a board") as pure decisions. The flag is board state, set
// and read in the board's own commit order, so a command decided after a pause commits is
// refused on every node, and one decided before it is not. A rewind never touches it.
import { BoardDraft, type Board, type PauseState } from './board.js';
import type { Decide } from './board-decision.js';
import { BoardError } from './board-error.js';

export interface PauseReply {
  paused: boolean;
  /** Who paused the board, and when (ms); null while it runs. */
  pausedBy: string | null;
  pausedAt: number | null;
  /** False when the board already was as asked (nothing logged). */
  changed: boolean;
  /** When this was decided (ms). */
  at: number;
  /**
   * The seq of the logged `board.paused` or `board.resumed` once the board's actor numbered it (its
   * audit row is keyed by it: two changes decided at one `at` are two rows); null when nothing was logged.
   */
  seq: number | null;
}

const replyOf = (paused: PauseState | null, changed: boolean, at: number): PauseReply => ({
  paused: paused !== null,
  pausedBy: paused?.by ?? null,
  pausedAt: paused?.at ?? null,
  changed,
  at,
  seq: null,
});

/**
 * Pauses (`paused` true) or resumes the board. Idempotent: a board already as asked is left
 * alone, and a second pause keeps who paused it first. Logs `board.paused` or `board.resumed`.
 */
export function setPaused(paused: boolean, actor: string): Decide<PauseReply> {
  return (board, now) => {
    if ((board.paused !== null) === paused) return { board, events: [], reply: replyOf(board.paused, false, now) };
    const draft = new BoardDraft(board);
    draft.paused = paused ? { by: actor, at: now } : null;
    const data = paused ? {} : { pausedBy: board.paused!.by, pausedAt: new Date(board.paused!.at).toISOString() };
    const reply = replyOf(draft.paused, true, now);
    return {
      board: draft.finish(),
      events: [{ type: paused ? 'board.paused' : 'board.resumed', actor, workId: null, data }],
      reply,
      numbered: ([seq]) => ({ ...reply, seq: seq ?? null }),
    };
  };
}

/** The refusal a paused board gives: 409 BOARD_PAUSED, saying who paused it and when. */
export function pausedError(paused: PauseState): BoardError {
  const at = new Date(paused.at).toISOString();
  return new BoardError(
    'BOARD_PAUSED',
    `The board is paused (by ${paused.by} since ${at}); claims and changes wait until an owner or admin resumes it.`,
    { pausedBy: paused.by, pausedAt: at },
  );
}

/** `decide`, refused with 409 BOARD_PAUSED while the board is paused. */
export function unlessPaused<R>(decide: Decide<R>): Decide<R> {
  return (board: Board, now: number) => {
    if (board.paused) throw pausedError(board.paused);
    return decide(board, now);
  };
}
