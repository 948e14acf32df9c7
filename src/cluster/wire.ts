// What a home node answers a forwarded command with, and how the entry node reads it back: the
// reply, or the refusal the caller would have had on one node (the same registry code and
// details), `moved` when the node is not the board's home, or `retry` when it took nothing.
import { AppError, isAppError } from '../errors/app-error.js';
import { ERRORS, type ErrorCode } from '../errors/registry.js';
import { toAppError } from '../board/board-access.js';
import { StoreUnavailableError } from '../../store/ports/store.js';

export type Answer =
  | { reply: unknown }
  | { error: { code: ErrorCode; message: string; details?: Record<string, unknown>; headers?: Record<string, string> } }
  | { storeUnavailable: true }
  | { moved: true }
  /** Not decided (the home drains): the entry node may send it again, to the board's next home. */
  | { retry: true };

export function refusalOf(e: unknown): Answer {
  const error = toAppError(e);
  if (isAppError(error)) return { error: { code: error.code, message: error.message, ...(error.details && { details: error.details }), ...(error.headers && { headers: error.headers }) } };
  if (error instanceof StoreUnavailableError) return { storeUnavailable: true };
  return { error: { code: 'INTERNAL', message: ERRORS.INTERNAL.meaning } };
}

/** The error the entry node throws for a refusal its peer answered. */
export function errorOf(answer: Extract<Answer, { error: unknown } | { storeUnavailable: true }>): Error {
  if ('storeUnavailable' in answer) return new StoreUnavailableError(new Error('the board’s home could not reach the store'));
  const { code, message, details, headers } = answer.error;
  return new AppError(code in ERRORS ? code : 'INTERNAL', message, details, headers);
}
