// The page's one way to the server: JSON over fetch with the session cookie, the CSRF token on
// writes, and errors as the registry's message and fix (never a raw envelope).
import { signal } from '@preact/signals';

/** The session's CSRF token, from signup, login or GET /api/auth/me. */
export const csrfToken = signal<string | null>(null);

/** The operator acting as this account, when the last answer said so (X-Impersonated-By): the banner shows. */
export const impersonatedBy = signal<string | null>(null);

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

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export async function api<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken.value) headers['x-csrf-token'] = csrfToken.value;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The service could not be reached.', 'Check your connection and retry.');
  }
  impersonatedBy.value = res.headers.get('x-impersonated-by');
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  if (!res.ok) {
    const e = (parsed.error ?? {}) as { code?: string; message?: string; fix?: string; details?: Record<string, unknown> };
    throw new ApiError(res.status, e.code ?? 'INTERNAL', e.message ?? `The service answered ${res.status}.`, e.fix ?? 'Retry; if it persists, report the request id.', e.details ?? {});
  }
  if (typeof parsed.csrfToken === 'string') csrfToken.value = parsed.csrfToken;
  return parsed as T;
}

/** A board operation: the board is selected with ?projectId=. */
export const onBoard = (projectId: string, path: string): string => `${path}${path.includes('?') ? '&' : '?'}projectId=${encodeURIComponent(projectId)}`;
