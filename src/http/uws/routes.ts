// The route table on uWS: each request copied out of uWS synchronously, refused unread when it
// must be (draining, too large), its body read under its route's cap, and answered once.
import type uWS from 'uWebSockets.js';
import { isBodyStream, type LargeBody, type Reply, type Route } from '../route.js';
import type { RawRequest } from '../pipeline.js';
import { paramNames } from '../route-shape.js';
import type { RawResponse } from '../responses.js';
import { andThen } from '../../../store/ports/maybe.js';
import type { HttpHandlers } from './types.js';
import { closing, writeWhole } from './respond.js';
import { ABORTED, Exchange, readBody, TOO_LARGE, type HeldWrites } from './exchange.js';

const UWS_METHOD = { get: 'get', post: 'post', patch: 'patch', put: 'put', delete: 'del' } as const;

const NO_BODY = Buffer.alloc(0);

/** The client's address as uWS gives it, text in an ArrayBuffer: decoded without a Buffer made around it first. */
const ADDRESS_TEXT = new TextDecoder();

type Run = (raw: RawRequest, id: string) => RawResponse | Promise<RawResponse>;

/** What a route's handler knows of its requests before reading them: the method it was mounted for, and how many path parameters it has. */
interface Mounted {
  method: string;
  params: number;
}

/** Where copyHeader() writes between requests: nowhere (a frozen record). */
const COPIED: Record<string, string> = Object.freeze({});
/** The record copyHeader() fills: one function for every request, not a closure made for each. */
let copying = COPIED;
const copyHeader = (k: string, v: string): void => {
  copying[k] = k in copying ? `${copying[k]}, ${v}` : v;
};

/**
 * Everything the request says, read now: uWS's request object dies when its callback returns.
 * A route's own handler (`mounted`) asks uWS neither for the method it was mounted for nor for a
 * parameter past its path's: each is a call into uWS and a string made.
 */
function copyRequest(res: uWS.HttpResponse, req: uWS.HttpRequest, mounted?: Mounted): RawRequest {
  const headers: Record<string, string> = (copying = {});
  req.forEach(copyHeader);
  copying = COPIED;
  const params: string[] = [];
  for (let i = 0, most = mounted ? mounted.params : Infinity; i < most; i++) {
    const p = req.getParameter(i);
    if (p === undefined || p === '') break;
    params.push(p);
  }
  return {
    method: mounted ? mounted.method : req.getMethod(),
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    params,
    remoteAddress: ADDRESS_TEXT.decode(res.getRemoteAddressAsText()),
    body: NO_BODY, // a body read later takes its place (set, not spread: a spread copy costs more than the rest of this copy)
  };
}

/** One server's routes on uWS: every route, HEAD for each GET, and the answer (404 or 405) for any other request. */
export class RouteTable {
  constructor(
    private readonly handlers: HttpHandlers,
    private readonly bodyLimit: number,
    private readonly held: HeldWrites,
  ) {}

  mount(app: uWS.TemplatedApp, routes: readonly Route[]): void {
    const handlers = this.handlers;
    for (const route of routes) {
      const uwsPath = route.path.replace(/\{(\w+)\}/g, ':$1');
      if (route.fixed && route.method === 'get') {
        const fixed = route as Route & { fixed: Reply };
        app.get(uwsPath, (res, req) => this.answerAtOnce(res, req, fixed, false));
        app.head(uwsPath, (res, req) => this.answerAtOnce(res, req, fixed, true));
        continue;
      }
      const params = paramNames(route.path).length;
      const mounted: Mounted = { method: route.method, params };
      const dispatch = (raw: RawRequest, id: string) => handlers.dispatch(route, raw, id);
      app[UWS_METHOD[route.method]](uwsPath, (res, req) =>
        this.serve(res, req, dispatch, false, this.bodyLimit, route.largeBody, mounted),
      );
      // HEAD answers as GET would, headers only.
      const mountedHead: Mounted = { method: 'head', params };
      const dispatchHead = (raw: RawRequest, id: string) => handlers.dispatch(route, { ...raw, method: 'get' }, id);
      if (route.method === 'get')
        app.head(uwsPath, (res, req) =>
          this.serve(res, req, dispatchHead, true, this.bodyLimit, undefined, mountedHead),
        );
    }
    const unrouted = this.unrouted(routes);
    app.any('/*', (res, req) => this.serve(res, req, unrouted, req.getMethod() === 'head'));
  }

  /** The answer to a path no route takes with this method: 405 with Allow when another method takes it, else 404. */
  private unrouted(routes: readonly Route[]): Run {
    const handlers = this.handlers;
    const matchers = routes.map((r) => ({
      route: r,
      pattern: new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}/?$`),
    }));
    return (raw, id) => {
      // An operator route names no method here, to anyone: its path answers another method as an unknown one (404, no Allow).
      const allow = matchers
        .filter((m) => m.route.auth !== 'operator' && m.pattern.test(raw.path))
        .flatMap((m) => (m.route.method === 'get' ? ['GET', 'HEAD'] : [m.route.method.toUpperCase()]));
      return allow.length
        ? handlers.refuseRequest('method-not-allowed', id, raw.headers, allow)
        : handlers.refuseRequest('not-found', id, raw.headers);
    };
  }

  /** A fixed reply, written inside this callback: only the request id is read from the request. */
  private answerAtOnce(
    res: uWS.HttpResponse,
    req: uWS.HttpRequest,
    route: Route & { fixed: Reply },
    headOnly: boolean,
  ): void {
    const handlers = this.handlers;
    const requestId = handlers.requestIdOf({ 'x-request-id': req.getHeader('x-request-id') });
    writeWhole(
      res,
      handlers.accepting() ? handlers.answerFixed(route, requestId) : handlers.refuse('draining', requestId),
      headOnly,
      true,
    );
  }

  private serve(
    res: uWS.HttpResponse,
    req: uWS.HttpRequest,
    run: Run,
    headOnly = false,
    limit = this.bodyLimit,
    larger?: LargeBody,
    mounted?: Mounted,
  ): void {
    const handlers = this.handlers;
    const raw = copyRequest(res, req, mounted);
    const headers = raw.headers;
    const exchange = new Exchange(res, handlers, this.held, handlers.requestIdOf(headers), headOnly);
    const requestId = exchange.requestId;
    if (!handlers.accepting()) {
      exchange.write(handlers.refuse('draining', requestId), true);
      return;
    }
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > Math.max(limit, larger?.limit ?? 0)) {
      // Refused unread: the connection closes after the answer, whether it is made now or once a session is looked up.
      const refused = handlers.refuseRequest('too-large', requestId, headers);
      if (!(refused instanceof Promise)) return void exchange.write(closing(refused), true);
      handlers.started();
      exchange.guard();
      exchange.answerLater(refused.then(closing));
      return;
    }
    handlers.started();
    if (raw.method === 'get' || headOnly) return this.answerBodiless(exchange, raw, run);
    exchange.guard();
    exchange.answerLater(
      readBody(
        res,
        {
          limit,
          ...(larger && { larger: { limit: larger.limit, admit: () => larger.admit(headers).catch(() => false) } }),
        },
        (cancel) => (exchange.cancelBody = cancel),
      ).then((body) => {
        if (body === ABORTED) return null;
        if (body === TOO_LARGE) return andThen(handlers.refuseRequest('too-large', requestId, headers), closing);
        raw.body = body;
        return run(raw, requestId);
      }),
    );
  }

  /**
   * No body to wait for: a response ready at once goes out inside the uWS callback, except a
   * refusal, which waits for the end of the turn with the responses held then (HeldWrites). Under
   * a flood the refusals are the load, and each written from its own callback woke the client on
   * its own: a send apiece that found it asleep. A request pipelined behind a refusal now meets
   * what it meets behind any answer made later: uWS closes the connection (it holds one response
   * per connection in flight, uWebSockets.js#277).
   */
  private answerBodiless(exchange: Exchange, raw: RawRequest, run: Run): void {
    let response: RawResponse | Promise<RawResponse>;
    try {
      response = run(raw, exchange.requestId);
    } catch {
      response = this.handlers.refuse('internal', exchange.requestId);
    }
    if (!(response instanceof Promise)) {
      if (response.status >= 400 && !isBodyStream(response.body)) return exchange.hold(response);
      if (isBodyStream(response.body)) exchange.guard(); // it outlives this callback
      exchange.finish(response, true);
      return;
    }
    exchange.guard();
    exchange.answerLater(response);
  }
}
