// The one error type handlers throw; the pipeline turns it into the wire envelope.
import { ERRORS, type ErrorCode } from './registry.js';

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message?: string,
    details?: Record<string, unknown>,
    headers?: Record<string, string>,
    cause?: unknown,
  ) {
    super(message ?? ERRORS[code].meaning, cause === undefined ? undefined : { cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.details = details;
    this.headers = headers;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
