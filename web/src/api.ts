// The page's one way to the server: the typed client (@agent-board/client) over the session
// cookie, with the CSRF token on writes. Refusals are the client's BoardApiError, shown as the
// registry's message and fix (never a raw envelope).
import { signal } from '@preact/signals';
import { BoardApiError, BoardClient, type ErrorCode } from '@agent-board/client';
import { REORDER_MAX } from './chain.js';

export { BoardApiError };

/** The session's CSRF token, from signup, login or GET /api/auth/me. */
export const csrfToken = signal<string | null>(null);

/** The operator acting as this account, when the last answer said so (X-Impersonated-By): the banner shows. */
export const impersonatedBy = signal<string | null>(null);

/** A refusal the page makes itself (a check before sending, the network failing), shown like the server's. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fix: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const unreachable = () =>
  new ApiError(0, 'NETWORK', 'The service could not be reached.', 'Check your connection and retry.');

/** The board's REST operations, typed by its OpenAPI document; a refusal throws a BoardApiError. */
export const client = new BoardClient({
  baseUrl: location.origin,
  credentials: 'same-origin',
  csrfToken: () => csrfToken.value,
  onAnswer: ({ response, body }) => {
    impersonatedBy.value = response.headers.get('x-impersonated-by');
    const token = (body as { csrfToken?: unknown } | null | undefined)?.csrfToken;
    if (response.ok && typeof token === 'string') csrfToken.value = token;
  },
  fetch: (request) => fetch(request).catch(() => Promise.reject(unreachable())),
});

/** Whether `error` is the server refusing (with one of `codes`, when named). */
export const refused = (error: unknown, ...codes: ErrorCode[]): error is BoardApiError =>
  error instanceof BoardApiError && (codes.length === 0 || (codes as string[]).includes(error.code));

/**
 * Refusals a person meets on the board and item pages, said for people: the registry's text is
 * written for agents (principal ids, ISO times, API routes to read). The code stays beside it.
 * (VERSION_MISMATCH is left to the pages that meet it: they name what changed, spec.tsx refusal.)
 */
const FOR_PEOPLE: Partial<Record<ErrorCode, { message: string; fix: string }>> = {
  BOARD_PAUSED: {
    message: 'This board is paused, so nothing was changed.',
    fix: 'An owner or admin resumes it with Resume in the banner at the top of the board; then try again.',
  },
  CROSS_PROJECT_FOLD: {
    message: 'A dependency names an item that is not on this board.',
    fix: 'Depend only on this board’s items: a line number of the list, or a work id such as W-12 seen on the board.',
  },
  CONFLICTING_DEPENDENCIES: {
    message: 'These dependencies would go round in a circle (or an item would wait for itself).',
    fix: 'Remove the dependency that closes the circle.',
  },
  ROLE_REQUIRED: {
    message: 'Your role on this board does not allow this.',
    fix: 'Ask the board’s owner for a higher role.',
  },
  RATE_LIMITED: {
    message: 'Too many changes in a short time.',
    fix: 'Wait a minute and try again.',
  },
  ITEM_NOT_FOUND: {
    message: 'That item is not on this board.',
    fix: 'Check the work id against the board.',
  },
  INVALID_TRANSITION: {
    message: 'The item’s state does not allow that move any more.',
    fix: 'The page shows its current state: pick a move it offers.',
  },
  BOARD_BUSY: {
    message: 'The board is busy with other changes.',
    fix: 'Try again in a few seconds.',
  },
};

/** What a failure shows: a sentence for people where there is one (else the registry's message), its fix and its code. */
export function shown(error: unknown): { message: string; fix: string; code: string } {
  if (error instanceof BoardApiError) {
    const forPeople = FOR_PEOPLE[error.code as ErrorCode];
    if (forPeople) return { ...forPeople, code: error.code };
    const prefix = `${error.code}: `;
    return {
      message: error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message,
      fix: error.fix,
      code: error.code,
    };
  }
  if (error instanceof ApiError) return error;
  return {
    message: String((error as Error | null)?.message ?? error),
    fix: 'Reload the page and retry.',
    code: 'INTERNAL',
  };
}

/**
 * Ranks `workIds` at the head of the chain in this order. A reorder names at most REORDER_MAX ids
 * and ranks them ahead of everything, so a longer list goes in parts from its end: each part lands
 * ahead of the one sent before it. Resolves to the number of reorders sent.
 */
export async function sendReorder(projectId: string, workIds: readonly string[]): Promise<number> {
  const parts: string[][] = [];
  for (let end = workIds.length; end > 0; end -= REORDER_MAX) {
    parts.push(workIds.slice(Math.max(0, end - REORDER_MAX), end));
  }
  for (const part of parts) {
    await client.post('/api/items/reorder', { params: { query: { projectId } }, body: { workIds: part } });
  }
  return parts.length;
}
