// Board refusals reach the caller under their own registry code: the codes are one union that must
// compile against the registry, and every one of them is mapped, none falls back to INTERNAL.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { BoardError, type BoardErrorCode } from '../../machines/board-error.js';
import { toAppError } from '../../src/board/board-access.js';
import { AppError } from '../../src/errors/app-error.js';
import type { ErrorCode } from '../../src/errors/registry.js';

/** Every board code with the status callers see; a code added to the union must be added here. */
const STATUS: Record<BoardErrorCode, number> = {
  INVALID_INPUT: 400,
  CONFLICTING_DEPENDENCIES: 400,
  CROSS_PROJECT_FOLD: 400,
  CROSS_PROJECT_PARENT: 400,
  EVIDENCE_EXISTS: 400,
  FINDING_REQUIRED: 400,
  DOCTRINE_LINK_NOT_FOUND: 400,
  PROJECT_SCOPE_DENIED: 403,
  ROLE_REQUIRED: 403,
  VERIFY_NOT_INDEPENDENT: 403,
  NOT_SUBMITTER: 403,
  ITEM_NOT_FOUND: 404,
  DOCTRINE_NOT_FOUND: 404,
  SPEC_CLAUSE_NOT_FOUND: 404,
  HEAD_MISMATCH: 409,
  INVALID_TRANSITION: 409,
  LEASE_NOT_HELD: 409,
  LEASE_EXPIRED: 409,
  NOTHING_READY: 409,
  ITEM_NOT_READY: 409,
  VERSION_MISMATCH: 409,
  DOCTRINE_EXISTS: 409,
  DOCTRINE_BLIND_TEST_UNSET: 409,
  BOARD_PAUSED: 409,
};

describe('board refusal codes', () => {
  it('are registry codes (checked by the compiler)', () => {
    expectTypeOf<BoardErrorCode>().toExtend<ErrorCode>();
  });

  it.each(Object.entries(STATUS))('%s keeps its code, status, message and details', (code, status) => {
    const mapped = toAppError(new BoardError(code as BoardErrorCode, `refused: ${code}`, { workId: 'W-1' }));
    expect(mapped).toBeInstanceOf(AppError);
    expect(mapped).toMatchObject({ code, status, message: `refused: ${code}`, details: { workId: 'W-1' } });
  });
});
