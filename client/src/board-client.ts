// BoardClient: the board's REST operations, typed from its OpenAPI document (schema.ts) and called
// through openapi-fetch. A refusal becomes a BoardApiError; the latest rate budget is kept.
import createClient, { type Client, type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import { BoardApiError } from './errors.js';
import type { paths } from './schema.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** The paths that answer `M`. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never;
}[keyof paths];
type Init<P extends keyof paths, M extends Method> = MaybeOptionalInit<paths[P], M>;
type Args<I> = undefined extends I ? [init?: I] : [init: I];
/** What a successful `M path` answers (undefined for a 204). */
export type Reply<P extends keyof paths, M extends Method> = Exclude<
  FetchResponse<paths[P][M] & object, object, `${string}/${string}`>['data'],
  undefined
>;

/** One rate window: Reset is Unix epoch seconds. */
export interface RateWindow {
  limit: number;
  remaining: number;
  reset: number;
}
/** The nine X-RateLimit-* headers: the binding figures, then the request and write budgets. */
export interface RateBudget extends RateWindow {
  request: RateWindow;
  write: RateWindow;
}

export interface BoardClientOptions {
  /** The board's origin, e.g. https://board.example (no /api). */
  baseUrl: string;
  /** A service token (agb_…), sent as Authorization: Bearer. */
  token?: string;
  /**
   * A cookie session's CSRF token (csrfToken of login, signup or GET /api/auth/me), sent in
   * X-CSRF-Token on writes; a function is asked each time. Browsers send the cookie themselves.
   */
  csrfToken?: string | (() => string | null | undefined);
  /** Extra headers on every call (in Node, `cookie` for a session). */
  headers?: Record<string, string>;
  /** Browsers: `include` to send the session cookie to another origin. */
  credentials?: 'include' | 'same-origin' | 'omit';
  fetch?: (request: Request) => Promise<Response>;
  /**
   * Hears every answer, a refusal's too, before the call returns or throws: a browser page keeps
   * the csrfToken a login or GET /api/auth/me carries, or reads a header of its own.
   */
  onAnswer?: (answer: Answer) => void;
}

/** An answer as onAnswer hears it: the response (its body already read) and that body, parsed. */
export interface Answer {
  response: Response;
  body: unknown;
}

/** The nine rate headers of an answer, or null when it has none. */
export function rateOf(headers: Headers): RateBudget | null {
  const window = (prefix: string): RateWindow | null => {
    const [limit, remaining, reset] = ['Limit', 'Remaining', 'Reset'].map((k) =>
      headers.get(`x-ratelimit-${prefix}${k}`),
    );
    return limit && remaining && reset
      ? { limit: Number(limit), remaining: Number(remaining), reset: Number(reset) }
      : null;
  };
  const [binding, request, write] = [window(''), window('request-'), window('write-')];
  return binding && request && write ? { ...binding, request, write } : null;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export class BoardClient {
  /** The openapi-fetch client itself: `{ data, error, response }` answers, nothing thrown for a refusal. */
  readonly raw: Client<paths>;
  /** The rate budget the latest answer reported (board operations carry it), or null before one did. */
  rate: RateBudget | null = null;

  constructor(readonly options: BoardClientOptions) {
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: { ...options.headers, ...(options.token && { authorization: `Bearer ${options.token}` }) },
      ...(options.credentials && { credentials: options.credentials }),
      ...(options.fetch && { fetch: options.fetch }),
    });
    this.raw.use(this.middleware());
  }

  get<P extends PathsWith<'get'>>(path: P, ...init: Args<Init<P, 'get'>>): Promise<Reply<P, 'get'>> {
    return this.call('get', path, init[0]);
  }

  post<P extends PathsWith<'post'>>(path: P, ...init: Args<Init<P, 'post'>>): Promise<Reply<P, 'post'>> {
    return this.call('post', path, init[0]);
  }

  put<P extends PathsWith<'put'>>(path: P, ...init: Args<Init<P, 'put'>>): Promise<Reply<P, 'put'>> {
    return this.call('put', path, init[0]);
  }

  patch<P extends PathsWith<'patch'>>(path: P, ...init: Args<Init<P, 'patch'>>): Promise<Reply<P, 'patch'>> {
    return this.call('patch', path, init[0]);
  }

  delete<P extends PathsWith<'delete'>>(path: P, ...init: Args<Init<P, 'delete'>>): Promise<Reply<P, 'delete'>> {
    return this.call('delete', path, init[0]);
  }

  /** Any operation; a refusal (any non-2xx answer) throws a BoardApiError. */
  private async call<T>(method: Method, path: string, init: unknown): Promise<T> {
    const request = this.raw.request as unknown as (
      m: Method,
      p: string,
      i?: unknown,
    ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    const { data, error, response } = await request(method, path, init);
    this.options.onAnswer?.({ response, body: response.ok ? data : error });
    if (!response.ok) throw BoardApiError.from(response.status, error, response.headers);
    return data as T;
  }

  private middleware(): Middleware {
    return {
      onRequest: ({ request }) => {
        const csrf = typeof this.options.csrfToken === 'function' ? this.options.csrfToken() : this.options.csrfToken;
        if (csrf && !SAFE.has(request.method)) request.headers.set('x-csrf-token', csrf);
        return request;
      },
      onResponse: ({ response }) => {
        this.rate = rateOf(response.headers) ?? this.rate;
        return undefined;
      },
    };
  }
}
