// The request pipeline of ARCHITECTURE.md, independent of the transport: a RawRequest in,
// a RawResponse out, every convention of the contract's Part 4 applied in one order.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { requestLogger, type RequestLine } from '../log.js';
import { addressKey } from '../ratelimit/address-key.js';
import { RefusalLog } from './refusal-log.js';
import { SESSION_COOKIE, type Authenticator } from '../auth/authenticator.js';
import { CSRF_HEADER, csrfTokenMatches, isCrossSite } from '../auth/csrf.js';
import type { ProjectSelector, SelectedProject } from '../auth/project-selection.js';
import { workspaceOf, type Identity, type SessionIdentity } from '../auth/identity.js';
import { AppError, isAppError } from '../errors/app-error.js';
import type { ResolutionObserver } from '../errors/observed-resolution.js';
import type { ErrorCode } from '../errors/registry.js';
import { drawRateBudget, RateDenial, type RateOutcome } from '../ratelimit/budgets.js';
import type { RateLimiter } from '../ratelimit/limiter.js';
import { parseCookies } from './cookies.js';
import type { Reply, RequestContext, Route } from './route.js';
import { parseWith } from './validation.js';
import { bodyOf } from './json-body.js';
import { paramsOf, shapeOf } from './route-shape.js';
import { Responses, type RawResponse, type Refusal } from './responses.js';
import { StoreUnavailableError } from '../../store/ports/store.js';
import { andThen, orElse, run as runSteps, type Maybe } from '../../store/ports/maybe.js';

/** Who may pass `auth: 'operator'` routes: the operators' gate (src/admin/gate.ts), above this layer, implements it. */
export interface OperatorAdmission {
  /** The operator's session identity, or a 404 NOT_FOUND refusal as for an unknown path. */
  admit(headers: Record<string, string>, cookies: Record<string, string>, now: number): Promise<SessionIdentity>;
}

export interface RawRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  params: string[];
  remoteAddress: string;
  body: Buffer;
}

export interface PipelineDeps {
  authenticator: Authenticator;
  /** Admits operators to `auth: 'operator'` routes; everyone else gets 404 (src/admin/gate.ts). */
  operators: OperatorAdmission;
  selector: ProjectSelector;
  limiter: RateLimiter;
  observer: ResolutionObserver;
  logger: Logger;
  publicUrl: string;
  /** Origins browser writes may come from; filled once the node listens (src/http/origins.ts). */
  allowedOrigins: ReadonlySet<string>;
  /** The client's address from the socket's peer and the headers (src/http/trusted-proxies.ts). */
  clientAddress: (peer: string, headers: Record<string, string>) => string;
  /** Told of every response: route (operation, or null before any route), status, seconds taken. */
  observe?: (operation: string | null, status: number, seconds: number) => void;
  /** Told of every routed response with its context (who, from where, which board): the operators' usage counters. */
  record?: (ctx: RequestContext, status: number) => void;
  /** Signs the CSRF tokens of cookie sessions. */
  csrfKey: Buffer;
  cookieSecure: boolean;
  addressRatePerMinute: number;
  boardRateScale: number;
  clock: () => number;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** What the rate stage left: the nine headers of a request it let through, or the denial of one it refused. */
interface Drawn {
  headers?: Record<string, string>;
  denied?: RateDenial;
}

/** What the stages end with when the rate stage refused the request (`Drawn.denied` says how). */
const DENIED: Reply = { status: 429 };

/** Names the operator on every response to a request made while impersonating. */
export const IMPERSONATION_HEADER = 'x-impersonated-by';

export class Pipeline {
  private readonly logRequest: (line: RequestLine) => void;
  /** Which spent budgets' refusals get a request line of their own (src/http/refusal-log.ts). */
  private readonly refusals: RefusalLog;
  /** Every response and refusal as written (src/http/responses.ts). */
  private readonly responses: Responses;

  constructor(private readonly deps: PipelineDeps) {
    this.logRequest = requestLogger(deps.logger);
    this.refusals = new RefusalLog(deps.logger, deps.clock);
    this.responses = new Responses(deps.publicUrl, deps.cookieSecure, deps.observer);
  }

  /** Logs the refusals counted and not logged yet (the node is shutting down, its requests done). */
  close(): void {
    this.refusals.close();
  }

  /** The one origin rule, for writes here and for socket upgrades. */
  crossSite(headers: Record<string, string>): boolean {
    return isCrossSite(headers, this.deps.allowedOrigins);
  }

  requestIdOf(headers: Record<string, string>): string {
    const given = headers['x-request-id'];
    return given && REQUEST_ID.test(given) ? given : randomUUID();
  }

  /** The answer of a route with a fixed reply, counted in the metrics; no context, stage or request line. */
  answerFixed(route: Route & { fixed: Reply }, requestId: string): RawResponse {
    const started = this.deps.observe && performance.now();
    const response = this.responses.fixed(route, requestId);
    if (started !== undefined)
      this.deps.observe!(shapeOf(route).operation, response.status, (performance.now() - started) / 1000);
    return response;
  }

  /**
   * Runs one request through every stage, then makes its response; never throws. The response is
   * made now when every stage and the handler answered now (the common case: a credential, a
   * selection and a budget held on this node, or a route that needs none of them), else once they
   * did.
   */
  run(route: Route, raw: RawRequest, requestId: string): RawResponse | Promise<RawResponse> {
    const started = performance.now();
    const ctx = this.context(route, raw, requestId);
    const rate: Drawn = {};
    let reply: Reply | Promise<Reply>;
    try {
      reply = runSteps(this.stages(route, raw, ctx, rate));
    } catch (e) {
      return this.refused(e, route, ctx, rate, started);
    }
    if (reply instanceof Promise) {
      return reply.then(
        (r) =>
          r === DENIED
            ? this.refused(rate.denied, route, ctx, rate, started)
            : this.answered(r, route, ctx, rate, started),
        (e: unknown) => this.refused(e, route, ctx, rate, started),
      );
    }
    if (reply === DENIED) return this.refused(rate.denied, route, ctx, rate, started);
    return this.answered(reply, route, ctx, rate, started);
  }

  /** The reply as a response; one that cannot be written as one (a body JSON cannot hold) is refused as any error is. */
  private answered(
    reply: Reply,
    route: Route,
    ctx: RequestContext,
    rate: Drawn,
    started: number,
  ): RawResponse | Promise<RawResponse> {
    let response: RawResponse;
    try {
      // Operators' calls stay out of the public resolution aggregates (GET /api/errors names operations).
      if (ctx.identity && route.auth !== 'operator')
        this.deps.observer.succeeded(workspaceOf(ctx.identity), ctx.operation);
      response = this.responses.of(reply, ctx.requestId, route.rateHeaders ? rate.headers : undefined);
    } catch (e) {
      return this.refused(e, route, ctx, rate, started);
    }
    return this.logged(ctx, started, response);
  }

  /**
   * The refusal of a request that failed at any stage. Made now whenever the rate headers it
   * carries are at hand (a denial carries its own, a request that drew on its budget has them, the
   * budget is counted here): under a flood the refusals are the load, and one made later cost a
   * promise, an abort handler and a turn of the event loop more than the answer it replaces.
   */
  private refused(
    e: unknown,
    route: Route,
    ctx: RequestContext,
    rate: Drawn,
    started: number,
  ): RawResponse | Promise<RawResponse> {
    try {
      const rateHeaders = route.rateHeaders ? this.refusalRateHeaders(e, route, ctx, rate.headers) : undefined;
      if (rateHeaders instanceof Promise)
        return rateHeaders.then((headers) => this.logged(ctx, started, this.failure(e, ctx, headers)));
      return this.logged(ctx, started, this.failure(e, ctx, rateHeaders));
    } catch (failed) {
      return Promise.reject(failed as Error); // as ever: a refusal that cannot be made rejects, never throws
    }
  }

  /**
   * The nine rate headers for a refusal on a board surface: the budget as this request left it,
   * or, for one refused before it drew on the budget, the budget as it stands (nothing counted).
   * None without a principal to count against, and none besides a denial's own: a spent budget's
   * refusal carries the nine headers as the draw that refused it left them, which a second look at
   * the budget would only repeat.
   */
  private refusalRateHeaders(
    e: unknown,
    route: Route,
    ctx: RequestContext,
    drawn: Record<string, string> | undefined,
  ): Maybe<Record<string, string> | undefined> {
    if (drawn) return drawn;
    if (route.rate === 'none' || route.rate === 'address' || route.rate === 'poll') return undefined;
    if (e instanceof RateDenial && e.ownsRateHeaders) return undefined;
    // Refused before authentication (a malformed body): whose budget it is still counts.
    return andThen(
      ctx.identity ??
        orElse(() => this.deps.authenticator.authenticate(route.auth, ctx.headers, ctx.cookies, ctx.now), null),
      (identity) => {
        if (!identity) return undefined;
        const peek = {
          rate: 'identity' as const,
          identity,
          remoteAddress: ctx.remoteAddress,
          plan: ctx.project?.plan ?? 'free',
          addressLimit: this.deps.addressRatePerMinute,
          scale: this.deps.boardRateScale,
          now: ctx.now,
        };
        return andThen(
          orElse(() => drawRateBudget(this.deps.limiter, peek), undefined),
          (outcome) => outcome?.headers,
        );
      },
    );
  }

  /**
   * An operator acting as the account: every response says so (DOMAIN.md "Operators"), refusals
   * included. One answered with no identity (refused before authentication, or a route that reads
   * none) finds out from its session cookie, looked up only when there is one.
   */
  private logged(ctx: RequestContext, started: number, response: RawResponse): RawResponse | Promise<RawResponse> {
    const operatorId = ctx.identity
      ? (ctx.identity.kind === 'session' && ctx.identity.impersonation?.operatorId) || null
      : this.impersonatorOf(ctx.headers, ctx.cookies, ctx.now);
    if (operatorId instanceof Promise) return operatorId.then((id) => this.told(ctx, started, marked(response, id)));
    return this.told(ctx, started, marked(response, operatorId));
  }

  /**
   * The operator behind a request's session cookie when it is an impersonation session, else null.
   * Nothing is looked up without a session cookie, nor for a Bearer call (its token is who acts);
   * never throws (a store that cannot answer leaves the response unmarked: it was refused anyway).
   */
  private impersonatorOf(
    headers: Record<string, string>,
    cookies: Record<string, string>,
    now: number,
  ): Maybe<string | null> {
    if (cookies[SESSION_COOKIE] === undefined || headers['authorization'] !== undefined) return null;
    const operatorOf = (identity: Identity | null): string | null =>
      (identity?.kind === 'session' && identity.impersonation?.operatorId) || null;
    try {
      const identity = this.deps.authenticator.authenticate('session-optional', headers, cookies, now);
      return identity instanceof Promise ? identity.then(operatorOf, () => null) : operatorOf(identity);
    } catch {
      return null;
    }
  }

  private told(ctx: RequestContext, started: number, response: RawResponse): RawResponse {
    const ms = performance.now() - started;
    this.deps.record?.(ctx, response.status);
    if (
      response.status !== 429 ||
      this.refusals.logs(ctx.identity?.principal ?? addressKey(ctx.remoteAddress), ctx.operation)
    )
      this.logRequest({
        reqId: ctx.requestId,
        route: ctx.operation,
        status: response.status,
        durationMs: Math.round(ms * 100) / 100,
      });
    this.deps.observe?.(ctx.operation, response.status, ms / 1000);
    return response;
  }

  private context(route: Route, raw: RawRequest, requestId: string): RequestContext {
    const cookie = raw.headers['cookie'];
    // Most calls (agents' Bearer tokens) send no cookie: nothing to split.
    const cookies = cookie === undefined ? {} : parseCookies(cookie);
    return {
      requestId,
      method: route.method,
      operation: shapeOf(route).operation,
      path: raw.path,
      params: paramsOf(shapeOf(route).params, raw.params),
      headers: raw.headers,
      remoteAddress: this.deps.clientAddress(raw.remoteAddress, raw.headers),
      cookies,
      identity: null,
      project: null,
      now: this.deps.clock(),
    };
  }

  /** Each stage in turn, run by `runSteps`: every `yield` is a step that may answer now or later. */
  private *stages(
    route: Route,
    raw: RawRequest,
    ctx: RequestContext,
    drawn: Drawn,
  ): Generator<unknown, Reply, unknown> {
    // The operator gate comes first: to anyone else an operator route is an unknown path, whatever was sent.
    if (route.auth === 'operator')
      ctx.identity = (yield this.deps.operators.admit(raw.headers, ctx.cookies, ctx.now)) as Identity;
    const body = bodyOf(route, raw);
    const params = raw.query ? Object.fromEntries(new URLSearchParams(raw.query)) : {};
    const requestedProject = route.project ? params.projectId : undefined;
    if (route.project) delete params.projectId;
    const query = route.query ? parseWith(route.query, params, 'query') : undefined;
    if (route.auth !== 'operator')
      ctx.identity = (yield this.deps.authenticator.authenticate(
        route.auth,
        raw.headers,
        ctx.cookies,
        ctx.now,
        route.accountScope ? 'UNAUTHENTICATED' : 'AUTH_REQUIRED',
      )) as Identity | null;
    if (route.accountScope && ctx.identity?.kind === 'token' && ctx.identity.scope !== 'account') {
      throw new AppError(
        'PROJECT_SCOPE_DENIED',
        'Workspace and resource tokens cannot act on account structure; use a session or an account-scoped token.',
      );
    }
    this.checkCsrf(route, raw, ctx);
    if (route.project && ctx.identity)
      ctx.project = (yield this.deps.selector.select(
        ctx.identity,
        requestedProject,
        route.project,
      )) as SelectedProject | null;
    const plan = ctx.project?.plan ?? 'free';
    const email = route.budgetsEmail ? (body as { email?: unknown } | undefined)?.email : undefined;
    const rate = (yield drawRateBudget(this.deps.limiter, {
      rate: route.rate,
      identity: ctx.identity,
      remoteAddress: ctx.remoteAddress,
      email: typeof email === 'string' ? email : undefined,
      plan,
      addressLimit: this.deps.addressRatePerMinute,
      scale: this.deps.boardRateScale,
      now: ctx.now,
    })) as RateOutcome;
    // A spent budget refuses the request as a thrown RATE_LIMITED would, without the throw (see RateDenial).
    if (rate.denied) {
      drawn.denied = rate.denied;
      return DENIED;
    }
    drawn.headers = rate.headers;
    if (route.refusedWhileImpersonating && ctx.identity?.kind === 'session' && ctx.identity.impersonation) {
      throw new AppError(
        'IMPERSONATION_FORBIDDEN',
        'An operator acting as this account cannot do this; the account’s owner does it, signed in as themselves.',
      );
    }
    return (yield route.handler({ ctx, body, query, raw: raw.body })) as Reply;
  }

  /**
   * Browser writes must come from a configured origin, and a cookie session's writes must also
   * carry its CSRF token (src/auth/csrf.ts). Signup, login and the other credential-free writes
   * need only the origin; a Bearer call without a cookie carries no ambient credential; signed
   * webhooks (raw bodies) come from the provider.
   */
  private checkCsrf(route: Route, raw: RawRequest, ctx: RequestContext): void {
    if (!isWrite(route) || route.bodyKind === 'raw') return;
    if (ctx.identity?.kind === 'token' && ctx.cookies[SESSION_COOKIE] === undefined) return;
    if (this.crossSite(raw.headers))
      throw new AppError('CSRF_REJECTED', 'A browser write must come from the service’s own origin.');
    if (
      ctx.identity?.kind === 'session' &&
      !csrfTokenMatches(this.deps.csrfKey, ctx.identity.sessionId, raw.headers[CSRF_HEADER])
    ) {
      throw new AppError(
        'CSRF_REJECTED',
        'A write with a session cookie needs the session’s csrfToken (from login, signup or GET /api/auth/me) in X-CSRF-Token.',
      );
    }
  }

  /**
   * An error reply for a request that never reached a route (404, 405, 413, draining, a socket
   * upgrade refused), in the envelope every refusal has: `details` and `headers` as an AppError's.
   * Given the request's headers, one made with an impersonation session cookie is marked as every
   * response of that session is (X-Impersonated-By), once its session is looked up.
   */
  reject(
    code: ErrorCode,
    requestId: string,
    message?: string,
    details?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): RawResponse;
  reject(
    code: ErrorCode,
    requestId: string,
    message: string | undefined,
    details: Record<string, unknown> | undefined,
    headers: Record<string, string>,
    request: Record<string, string>,
  ): RawResponse | Promise<RawResponse>;
  reject(
    code: ErrorCode,
    requestId: string,
    message?: string,
    details?: Record<string, unknown>,
    headers: Record<string, string> = {},
    request?: Record<string, string>,
  ): RawResponse | Promise<RawResponse> {
    const response = this.responses.error(new AppError(code, message, details, headers), requestId, {});
    if (request?.['cookie'] === undefined) return response;
    return andThen(this.impersonatorOf(request, parseCookies(request['cookie']), this.deps.clock()), (operatorId) =>
      marked(response, operatorId),
    );
  }

  private failure(e: unknown, ctx: RequestContext, rateHeaders?: Record<string, string>): RawResponse {
    const refusal = isAppError(e) || e instanceof RateDenial;
    // Authentication depends on the store: when it cannot answer, every surface fails closed.
    const error: Refusal = refusal
      ? e
      : e instanceof StoreUnavailableError
        ? new AppError('AUTH_UNAVAILABLE')
        : new AppError('INTERNAL');
    if (!refusal || error.status >= 500) {
      this.deps.logger.error({ reqId: ctx.requestId, route: ctx.operation, err: e }, 'request failed');
    }
    if (ctx.identity) this.deps.observer.failed(workspaceOf(ctx.identity), error.code);
    if (e instanceof RateDenial && !rateHeaders) return this.responses.denial(e, ctx.requestId);
    // The error's own headers win over the rate headers (a denial's Retry-After, a 405's Allow).
    const headers = rateHeaders ? { ...rateHeaders, ...error.headers } : error.headers;
    return this.responses.error(error, ctx.requestId, ctx.cookies, headers);
  }
}

const isWrite = (route: Route): boolean => route.method !== 'get';

/** The response, naming the operator behind it when an operator acts as the account. */
function marked(response: RawResponse, operatorId: string | null): RawResponse {
  if (operatorId !== null) response.headers.push([IMPERSONATION_HEADER, operatorId]);
  return response;
}
