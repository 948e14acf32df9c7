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
}

/** Decides from the current board and time; throws BoardError to refuse. */
export type Decide<R> = (board: Board, now: number) => Decision<R>;
