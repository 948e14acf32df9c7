// A fetch for the typed client that never leaves the process: each request is matched to its
// route and run through the same pipeline as one from the network (authentication, project
// selection, the caller's rate budget, the handler), with the caller's credential and address.
// The /mcp tools thus behave exactly as the REST calls they stand for, with no loopback socket.
import type { RawRequest, RawResponse } from '../http/pipeline.js';
import { isBodyStream, type Route } from '../http/route.js';

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
}

export function routeMatchers(routes: readonly Route[]): Matcher[] {
  // Static paths before parameterised ones (/api/items/batch before /api/items/{workId}).
  const params = (r: Route) => (r.path.match(/\{/g) ?? []).length;
  return [...routes]
    .sort((a, b) => params(a) - params(b))
    .map((route) => ({ route, pattern: new RegExp(`^${route.path.replace(/\{\w+\}/g, '([^/]+)')}/?$`) }));
}

export function inProcessFetch(
  deps: InProcessDeps,
  matchers: Matcher[],
  caller: Caller,
): (request: Request) => Promise<Response> {
  let n = 0;
  return async (request) => {
    const url = new URL(request.url);
    const method = request.method.toLowerCase();
    const requestId = `${caller.requestId}.${++n}`.slice(-128);
    let params: string[] = [];
    const match = matchers.find((m) => {
      if (m.route.method !== method) return false;
      const found = m.pattern.exec(url.pathname);
      if (found) params = found.slice(1);
      return found !== null;
    });
    if (!match) return toResponse(deps.notFound(requestId));
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
    return toResponse(await deps.run(match.route, raw, requestId));
  };
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
