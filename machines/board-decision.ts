// What a board decision produces: the next board, the events to append, and the caller's reply.
import type { Board } from './board.js';

export interface NewEvent {
  type: string;
  actor: string;
  workId: string | null;
  data: Record<string, unknown>;
}

export interface Decision<R> {
  board: Board;
  events: NewEvent[];
  reply: R;
  /**
   * The reply once the board's actor has numbered `events` (their seqs, in order), for a reply that
   * names them: an audit row keyed by its committed event. Without it the reply is `reply`.
   */
  numbered?: (seqs: readonly number[]) => R;
}

/** Decides from the current board and time; throws BoardError to refuse. */
export type Decide<R> = (board: Board, now: number) => Decision<R>;
