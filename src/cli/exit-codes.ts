// The CLI's exit status follows the class of what went wrong, so a script can tell "try later"
// from "fix your input" from "log in again" without parsing any text (docs/agents.md#command-line lists them).
import { BoardApiError } from '../mcp/client.js';

export const EXIT = {
  ok: 0,
  /** Anything not foreseen (a bug, an unreadable answer). */
  unexpected: 1,
  /** Bad arguments or configuration, or the board refused the input itself (400, 413, 415, 422). */
  usage: 2,
  /** No credential, or the board refused it (401, 403), or the device flow was denied or ran out. */
  auth: 3,
  /** Not found or conflict (404, 409): no such item, nothing ready, a lease expired or held by another; a renewal that says the lease was revoked. */
  conflict: 4,
  /** Rate limited (429): wait Retry-After seconds. */
  rateLimited: 5,
  /** The board is unavailable (5xx), unreachable, or something between answered instead of it. */
  unavailable: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A mistake in how the CLI was called or configured (exit 2). */
export class UsageError extends Error {}

/** No usable credential (exit 3). */
export class AuthError extends Error {}

/** Refusals that are about the credential though their status is 400. */
const AUTH_CODES = new Set(['ACCESS_DENIED', 'EXPIRED_TOKEN', 'INVALID_DEVICE_CODE']);

export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof UsageError) return EXIT.usage;
  if (error instanceof AuthError) return EXIT.auth;
  if (error instanceof BoardApiError) {
    if (error.code === 'UNEXPECTED_RESPONSE') return EXIT.unavailable;
    if (AUTH_CODES.has(error.code) || error.status === 401 || error.status === 403) return EXIT.auth;
    if (error.status === 404 || error.status === 409) return EXIT.conflict;
    if (error.status === 429) return EXIT.rateLimited;
    if (error.status >= 500) return EXIT.unavailable;
    if (error.status >= 400) return EXIT.usage;
    return EXIT.unexpected;
  }
  // fetch's own failure: nothing answered.
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) return EXIT.unavailable;
  return EXIT.unexpected;
}
