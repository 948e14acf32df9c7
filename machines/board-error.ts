// A refusal from the board's pure decisions: a code, a message, and details for the caller. The
// codes form one union so src/board/board-access.ts can check at compile time that each of them
// is in the error registry (machines/ cannot import it).
import type { GraphError } from './board-graph.js';
import type { DoctrineRefusalCode } from './doctrine-machine.js';
import type { RefusalCode } from './item-types.js';

/** Every code a board decision refuses with: the item and doctrine machines', the graph rules', and the commands' own. */
export type BoardErrorCode =
  | RefusalCode
  | DoctrineRefusalCode
  | GraphError['code']
  | 'INVALID_INPUT'
  | 'INVALID_TRANSITION'
  | 'ITEM_NOT_FOUND'
  | 'NOTHING_READY'
  | 'VERSION_MISMATCH'
  | 'PROJECT_SCOPE_DENIED'
  | 'ROLE_REQUIRED'
  | 'DOCTRINE_EXISTS'
  | 'DOCTRINE_NOT_FOUND'
  | 'DOCTRINE_LINK_NOT_FOUND'
  | 'SPEC_CLAUSE_NOT_FOUND'
  | 'BOARD_PAUSED';

export class BoardError extends Error {
  constructor(
    readonly code: BoardErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'BoardError';
  }
}
