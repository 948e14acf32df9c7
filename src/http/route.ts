// A route is data: method, path, schemas, authentication, rate class and handler. The server,
// the OpenAPI document and the error registry's operation lists are all read from these objects.
import type { z } from 'zod';
import type { ErrorCode } from '../errors/registry.js';
import type { Identity } from '../auth/identity.js';
import type { SelectedProject, SelectionMode } from '../auth/project-selection.js';

export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

/**
 * none: no credential read (signup, login, webhook). session-optional: uses a live session when
 * present (logout). session: cookie session required. bearer-or-session: either credential.
 */
export type AuthKind = 'none' | 'session-optional' | 'session' | 'bearer-or-session';

/**
 * identity: budgets reported, never denied. read/write: per-principal budgets. lifecycle: the
 * claim/lease/submit/supersede/verify writes, which draw on the request budget only, so they stay
 * available after the write budget is spent. address: per socket address.
 */
export type RateClass = 'none' | 'identity' | 'read' | 'write' | 'lifecycle' | 'address';

/** json: a JSON body is required. optional-json: a body, when present, must be JSON. raw: bytes as sent. */
export type BodyKind = 'none' | 'json' | 'optional-json' | 'raw';

export interface RequestContext {
  requestId: string;
  method: Method;
  /** "METHOD /path/{param}" as in the route table. */
  operation: string;
  path: string;
  params: Record<string, string>;
  headers: Record<string, string>;
  remoteAddress: string;
  cookies: Record<string, string>;
  identity: Identity | null;
  /** The selected project, on routes that select one. */
  project: SelectedProject | null;
  now: number;
}

export interface SetCookie {
  name: string;
  value: string;
  /** Seconds; 0 clears the cookie. */
  maxAge: number;
}

export interface Reply {
  status: number;
  body?: unknown;
  /** Non-JSON bodies (HTML pages) are sent as given with their own content type. */
  contentType?: string;
  headers?: Record<string, string>;
  cookies?: SetCookie[];
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
  /** Route-specific error codes; the pipeline adds those its stages can raise. */
  errors: readonly ErrorCode[];
  responses: Record<number, ResponseSpec>;
  /** Selects a project from `?projectId=` or the credential's default (see project-selection.ts). */
  project?: SelectionMode;
  /** Account structure: workspace- and resource-scoped tokens are refused (PROJECT_SCOPE_DENIED). */
  accountScope?: boolean;
  /** Emits the nine X-RateLimit-* headers on success. */
  rateHeaders?: boolean;
  handler(input: HandlerInput<B, Q>): Promise<Reply> | Reply;
}

/** Keeps the handler's types tied to the route's schemas. */
export function defineRoute<B = undefined, Q = undefined>(route: Route<B, Q>): Route {
  return route as unknown as Route;
}

export const operationOf = (route: Pick<Route, 'method' | 'path'>): string => `${route.method.toUpperCase()} ${route.path}`;
