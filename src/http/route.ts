// A route is data: method, path, schemas, authentication, rate class and handler. The server,
// the OpenAPI document and the error registry's operation lists are all read from these objects.
import type { z } from 'zod';
import { REFUSED_WHILE_PAUSED, type CommandKind } from '../board/commands.js';
import type { ErrorCode } from '../errors/registry.js';
import type { SelectionMode } from '../auth/project-selection.js';
import type { AuthKind, Method, RateClass, RequestContext, SetCookie } from '../request-context.js';

// The request's own names live below http (auth, budgets and board access read them); the route
// layer's importers keep finding them here.
export type { AuthKind, Method, RateClass, RequestContext, SetCookie };

/** json: a JSON body is required. optional-json: a body, when present, must be JSON. raw: bytes as sent. */
export type BodyKind = 'none' | 'json' | 'optional-json' | 'raw';

/** The content type of every JSON body; a route that serializes its own body sends it with this. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export interface Reply {
  status: number;
  /** A JSON value; with `contentType`, a string or Buffer sent as given, or a BodyStream. */
  body?: unknown;
  /** Non-JSON bodies (HTML pages, streamed exports) are sent as given with their own content type. */
  contentType?: string;
  headers?: Record<string, string>;
  cookies?: SetCookie[];
}

/**
 * A body written as it is produced (src/http/uws/respond.ts): each chunk goes out once the client has taken
 * what was written before it, so a large export never sits whole in memory. A client that goes away
 * ends the iteration (the source's `finally` runs); a source that throws mid-way cuts the connection,
 * so the client sees a body that did not finish. Give it with a `contentType`.
 */
export type BodyStream = AsyncIterable<string | Uint8Array>;

export const isBodyStream = (body: unknown): body is BodyStream =>
  typeof body === 'object' && body !== null && Symbol.asyncIterator in body;

export interface LargeBody {
  limit: number;
  admit(headers: Record<string, string>): Promise<boolean>;
}

export interface HandlerInput<B, Q> {
  ctx: RequestContext;
  body: B;
  query: Q;
  raw: Buffer;
}

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

export interface Route<B = unknown, Q = unknown> {
  method: Method;
  /** OpenAPI-style path, e.g. /api/projects/{projectId}. */
  path: string;
  group: string;
  summary: string;
  description?: string;
  auth: AuthKind;
  bodyKind: BodyKind;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  rate: RateClass;
  /**
   * Route-specific error codes; the pipeline adds those its stages can raise. BOARD_PAUSED is not
   * written here: `defineRoute` adds it when the route `sends` a command a paused board refuses.
   */
  errors: readonly ErrorCode[];
  /** The board commands the handler sends (src/board/commands.ts), whose refusals the route answers. */
  sends?: readonly CommandKind[];
  responses: Record<number, ResponseSpec>;
  /** Selects a project from `?projectId=` or the credential's default (see project-selection.ts). */
  project?: SelectionMode;
  /** Account structure: workspace- and resource-scoped tokens are refused (PROJECT_SCOPE_DENIED). */
  accountScope?: boolean;
  /** Emits the nine X-RateLimit-* headers on success. */
  rateHeaders?: boolean;
  /** The per-address budget also reads the body's `email`: one of an allowlisted domain draws on a budget of its own (src/admin/allowlist.ts). */
  budgetsEmail?: boolean;
  /** Refused to an operator acting as the account (403 IMPERSONATION_FORBIDDEN): the account's credentials, its agents' and its money. */
  refusedWhileImpersonating?: boolean;
  /**
   * A body larger than the server's BODY_LIMIT_BYTES, up to `limit`, for callers `admit` lets in
   * (asked before the body passes the server's limit). Anyone else meets the server's limit, with
   * what any other path answers past it.
   */
  largeBody?: LargeBody;
  /**
   * A reply that never changes and needs nothing of the request (the liveness probe): the HTTP
   * layer answers it inside uWS's callback with its request id, counted in the metrics, but with
   * no request line in the log (a balancer probing every node every few seconds would fill it)
   * and none of the stages. The handler must answer the same.
   */
  fixed?: Reply;
  handler(input: HandlerInput<B, Q>): Promise<Reply> | Reply;
}

/**
 * Keeps the handler's types tied to the route's schemas, and lists 409 BOARD_PAUSED among the
 * route's errors when it sends a command that a paused board refuses (REFUSED_WHILE_PAUSED): the
 * pause list is the command kinds', never a route's.
 */
export function defineRoute<B = undefined, Q = undefined>(route: Route<B, Q>): Route {
  const paused = route.sends?.some((kind) => REFUSED_WHILE_PAUSED.has(kind)) && !route.errors.includes('BOARD_PAUSED');
  return (paused ? { ...route, errors: [...route.errors, 'BOARD_PAUSED'] } : route) as unknown as Route;
}

export const operationOf = (route: Pick<Route, 'method' | 'path'>): string =>
  `${route.method.toUpperCase()} ${route.path}`;
