// A fetch for the typed client that never leaves the process: each request is matched to its
// route and run through the same pipeline as one from the network (authentication, project
// selection, the caller's rate budget, the handler), with the caller's credential and address.
// The /mcp tools thus behave exactly as the REST calls they stand for, with no loopback socket;
// only the notices' reads, which the caller did not ask for, are run apart, drawing on nothing.
import type { RawRequest } from '../http/pipeline.js';
import type { RawResponse } from '../http/responses.js';
import { isBodyStream, operationOf, type Route } from '../http/route.js';

export interface InProcessDeps {
  routes: readonly Route[];
  run(route: Route, raw: RawRequest, requestId: string): RawResponse | Promise<RawResponse>;
  /** The answer to a path no route takes (404 NOT_FOUND). */
  notFound(requestId: string): RawResponse;
}

/** What each inner request carries of the outer one. */
export interface Caller {
  /** Its credential and browser context (authorization, cookie, x-csrf-token, origin, …). */
  headers: Record<string, string>;
  /** The client's address as the outer request resolved it. */
  address: string;
  requestId: string;
}

/** The caller's headers an inner request keeps; forwarding headers are left out (the address is already resolved). */
const CARRIED = ['authorization', 'cookie', 'x-csrf-token', 'origin', 'sec-fetch-site', 'user-agent'];

interface Matcher {
  route: Route;
  pattern: RegExp;
  /** The route drawing on nothing (rate 'none'), for the few reads the caller did not ask for. */
  free: Route | null;
}

/** The rate classes that draw on the caller's request budget (src/ratelimit/budgets.ts). */
const DRAWING = new Set<Route['rate']>(['read', 'write', 'lifecycle']);

/** One outer request's way in: its requests on its budget, the few it did not ask for on none. */
export interface InProcessCaller {
  /** Each request on the caller's budget, as the REST call would be. */
  fetch(request: Request): Promise<Response>;
  /** A request to one of the `unbudgeted` operations, drawing on nothing (any other path: 404 NOT_FOUND). */
  freeFetch(request: Request): Promise<Response>;
  /** How many of `fetch`'s requests drew on the budget (each reached its handler) since the last take; the count restarts. */
  takeDrawn(): number;
}

/**
 * The route table as the /mcp tools reach it, made once per node. A route that draws on the
 * caller's budget is run as a copy whose handler first tells its fetch that it was reached: the
 * pipeline runs a handler only after the rate stage drew on the budget, so a request refused
 * before (its input, its credential, the budget itself) is not counted. The operations named
 * `unbudgeted` (reads of the read class) may also be run as copies that draw on nothing, through
 * `freeFetch`; what bounds them is their caller's (src/mcp/log-session.ts).
 */
export class InProcessRoutes {
  private readonly matchers: Matcher[];
  /**
   * Who to tell that a request reached its handler, by the request's headers: the pipeline hands
   * the handler the very object the fetch made (ctx.headers), which nothing outside can forge.
   */
  private readonly reaching = new WeakMap<Record<string, string>, () => void>();

  constructor(
    private readonly deps: InProcessDeps,
    unbudgeted: readonly string[],
  ) {
    // Static paths before parameterised ones (/api/items/batch before /api/items/{workId}).
    const params = (r: Route) => (r.path.match(/\{/g) ?? []).length;
    this.matchers = [...deps.routes]
      .sort((a, b) => params(a) - params(b))
      .map((route) => ({
        route: DRAWING.has(route.rate) ? this.watched(route) : route,
        pattern: new RegExp(`^${route.path.replace(/\{\w+\}/g, '([^/]+)')}/?$`),
        free: route.rate === 'read' && unbudgeted.includes(operationOf(route)) ? { ...route, rate: 'none' } : null,
      }));
  }

  /** The way in of one outer request (its inner request ids numbered apart: `<its id>.<n>`). */
  open(caller: Caller): InProcessCaller {
    let drawn = 0;
    const ids = { n: 0 };
    return {
      fetch: this.fetcher(
        caller,
        ids,
        (m) => m.route,
        () => void drawn++,
      ),
      freeFetch: this.fetcher(caller, ids, (m) => m.free),
      takeDrawn: () => {
        const n = drawn;
        drawn = 0;
        return n;
      },
    };
  }

  private watched(route: Route): Route {
    return {
      ...route,
      handler: (input) => {
        this.reaching.get(input.ctx.headers)?.();
        return route.handler(input);
      },
    };
  }

  private fetcher(
    caller: Caller,
    ids: { n: number },
    pick: (m: Matcher) => Route | null,
    reached?: () => void,
  ): (request: Request) => Promise<Response> {
    const { deps } = this;
    return async (request) => {
      const url = new URL(request.url);
      const method = request.method.toLowerCase();
      const requestId = `${caller.requestId}.${++ids.n}`.slice(-128);
      let params: string[] = [];
      let route: Route | null = null;
      for (const m of this.matchers) {
        if (m.route.method !== method) continue;
        const found = m.pattern.exec(url.pathname);
        if (!found) continue;
        params = found.slice(1);
        route = pick(m);
        break;
      }
      if (!route) return toResponse(deps.notFound(requestId));
      const headers: Record<string, string> = {};
      for (const name of CARRIED) if (caller.headers[name] !== undefined) headers[name] = caller.headers[name];
      request.headers.forEach((value, name) => void (name !== 'authorization' && (headers[name] = value)));
      headers['x-request-id'] = requestId;
      const raw: RawRequest = {
        method,
        path: url.pathname,
        query: url.search.slice(1),
        headers,
        params,
        remoteAddress: caller.address,
        body: Buffer.from(await request.arrayBuffer()),
      };
      if (reached) this.reaching.set(headers, reached);
      return toResponse(await deps.run(route, raw, requestId));
    };
  }
}

async function toResponse(raw: RawResponse): Promise<Response> {
  const headers = new Headers();
  for (const [k, v] of raw.headers) headers.append(k, v);
  let body: Buffer | string = '';
  if (isBodyStream(raw.body)) {
    const chunks: Buffer[] = [];
    for await (const chunk of raw.body) chunks.push(Buffer.from(chunk));
    body = Buffer.concat(chunks);
  } else body = raw.body;
  const empty = raw.status === 204 || raw.status === 304 || body.length === 0;
  return new Response(empty ? null : body, { status: raw.status, headers });
}
