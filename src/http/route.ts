// A route is data: method, path, schemas, authentication, rate class and handler. The server,
// the OpenAPI document and the error registry's operation lists are all read from these objects.
import type { z } from 'zod';
import type { ErrorCode } from '../errors/registry.js';
import type { SelectionMode } from '../auth/project-selection.js';
import type { AuthKind, Method, RateClass, RequestContext, SetCookie } from '../request-context.js';

// The request's own names live below http (auth, budgets and board access read them); the route
// layer's importers keep finding them here.
export type { AuthKind, Method, RateClass, RequestContext, SetCookie };

/** json: a JSON body is required. optional-json: a body, when present, must be JSON. raw: bytes as sent. */
export type BodyKind = 'none' | 'json' | 'optional-json' | 'raw';

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
