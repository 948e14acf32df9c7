// The board's one error envelope (GET /api/errors lists every code), as a typed Error.
import type { components } from './schema.js';

type Envelope = components['schemas']['ErrorEnvelope']['error'];

/** Every code the registry can answer with. */
export type ErrorCode = Envelope['code'];

/** The code given to an answer that is not the board's envelope (a proxy's page, an empty body). */
export const UNEXPECTED_RESPONSE = 'UNEXPECTED_RESPONSE';

/** A refused call: the registry's code with its meaning and fix, as the server sent them. */
export class BoardApiError extends Error {
  override readonly name = 'BoardApiError';
  readonly status: number;
  readonly code: ErrorCode | typeof UNEXPECTED_RESPONSE;
  readonly meaning: string;
  readonly fix: string;
  readonly details: Record<string, unknown> | null;
  readonly requestId: string | null;
  /** Seconds to wait before trying again, from Retry-After (429, 503 BOARD_BUSY), else null. */
  readonly retryAfter: number | null;

  constructor(init: {
    status: number;
    code: ErrorCode | typeof UNEXPECTED_RESPONSE;
    message: string;
    meaning: string;
    fix: string;
    details?: Record<string, unknown> | null;
    requestId?: string | null;
    retryAfter?: number | null;
  }) {
    super(`${init.code}: ${init.message}`);
    this.status = init.status;
    this.code = init.code;
    this.meaning = init.meaning;
    this.fix = init.fix;
    this.details = init.details ?? null;
    this.requestId = init.requestId ?? null;
    this.retryAfter = init.retryAfter ?? null;
  }

  /** The error an answer carries: its envelope when it has one. */
  static from(status: number, body: unknown, headers?: Headers): BoardApiError {
    const retry = Number(headers?.get('retry-after') ?? NaN);
    const requestId = headers?.get('x-request-id') ?? null;
    const envelope = isEnvelope(body) ? body.error : null;
    if (!envelope) {
      return new BoardApiError({
        status,
        code: UNEXPECTED_RESPONSE,
        message: `HTTP ${status} without the board's error envelope`,
        meaning:
          'The answer did not come from the board, or was cut short (a proxy, a gateway or the network in between).',
        fix: 'Retry later; if it persists, check the base URL and whatever stands between you and the board.',
        requestId,
        retryAfter: Number.isFinite(retry) ? retry : null,
      });
    }
    const { code, message, meaning, fix, details } = envelope;
    return new BoardApiError({
      status,
      code,
      message,
      meaning,
      fix,
      details: details ?? null,
      requestId: envelope.requestId ?? requestId,
      retryAfter: Number.isFinite(retry) ? retry : null,
    });
  }

  /** The error an `{type: "error"}` socket message carries. */
  static fromSocket(error: unknown): BoardApiError {
    const status = isEnvelope({ error }) ? (error as Envelope).status : 0;
    return BoardApiError.from(status, { error });
  }
}

function isEnvelope(body: unknown): body is { error: Envelope } {
  const error = (body as { error?: Partial<Envelope> } | null | undefined)?.error;
  return (
    typeof error === 'object' && error !== null && typeof error.code === 'string' && typeof error.message === 'string'
  );
}
