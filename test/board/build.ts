// Boards for the board-module tests, built by the pure commands as an agent fleet would.
import { emptyBoard, type Board, type ItemFields } from '../../machines/board.js';
import { createItems } from '../../machines/board-commands.js';
import { claim, submit } from '../../machines/lease-commands.js';
import type { Decide } from '../../machines/board-decision.js';

export const fields = (title: string, over: Partial<ItemFields> = {}): ItemFields => ({
  title,
  description: '',
  type: 'task',
  priority: 2,
  parentId: null,
  dependsOn: [],
  verify: 'none',
  maxAttempts: 3,
  criteria: [],
  doctrine: [],
  spec: [],
  labels: [],
  ...over,
});

export const run = <R>(board: Board, decide: Decide<R>, now: number): { board: Board; reply: R } => decide(board, now);

/** `n` ready items; `claimed` of them claimed by agent:a, then `done` of those submitted. */
export function boardWith(now: number, n: number, claimed = 0, done = 0): Board {
  let board = run(
    emptyBoard(),
    createItems(
      Array.from({ length: n }, (_, i) => fields(`item ${i + 1}`)),
      'user:o',
    ),
    now,
  ).board;
  for (let i = 1; i <= claimed; i++) {
    const grant = run(
      board,
      claim({ principal: 'agent:a', workId: `W-${i}`, purpose: 'work', ttlMs: 60_000, leaseId: `lease-${i}` }),
      now,
    );
    board = grant.board;
    if (i <= done)
      board = run(board, submit({ principal: 'agent:a', leaseId: `lease-${i}`, head: 'abcdef0' }), now).board;
  }
  return board;
}
