// The node's front door: the request pipeline every route runs through, and the uWebSockets.js
// transport that carries the route table, POST /mcp, the sockets and the peers' channel, with
// the refusals it makes before any route (unknown path, wrong method, too large, draining).
import type { Logger } from 'pino';
import type { ServerKeys } from '../auth/keys.js';
import type { Watch } from '../admin/watch.js';
import type { Config } from '../config.js';
import type { ResolutionObserver } from '../errors/observed-resolution.js';
import type { ErrorCode } from '../errors/registry.js';
import { Pipeline } from '../http/pipeline.js';
import type { RawResponse } from '../http/responses.js';
import type { Route } from '../http/route.js';
import { clientAddress } from '../http/trusted-proxies.js';
import {
  createHttpServer,
  type HttpServer,
  type PeerEndpoint,
  type RefusalReason,
  type SocketHandlers,
} from '../http/uws.js';
import { mcpRoute } from '../mcp/http.js';
import { UNMATCHED, type NodeMetrics } from '../metrics/metrics.js';
import { andThen } from '../../store/ports/maybe.js';
import type { Access } from './access.js';
import type { Drain } from './drain.js';

const REFUSAL: Record<RefusalReason, ErrorCode> = {
  'not-found': 'NOT_FOUND',
  'method-not-allowed': 'METHOD_NOT_ALLOWED',
  'too-large': 'BODY_TOO_LARGE',
  draining: 'SERVICE_UNAVAILABLE',
  internal: 'INTERNAL',
};

export function makePipeline(parts: {
  config: Config;
  access: Access;
  observer: ResolutionObserver;
  logger: Logger;
  keys: ServerKeys;
  watch: Watch;
  metrics: NodeMetrics | null;
  /** The origins a browser write may come from; filled once the node listens (without PUBLIC_URL they name the port taken). */
  origins: ReadonlySet<string>;
  clock: () => number;
}): Pipeline {
  const { config, access, metrics } = parts;
  const { trustedProxies, forwardedHeader } = config;
  return new Pipeline({
    authenticator: access.authenticator,
    operators: access.operators,
    selector: access.selector,
    limiter: access.limiter,
    observer: parts.observer,
    logger: parts.logger,
    publicUrl: config.publicUrl,
    allowedOrigins: parts.origins,
    clientAddress: (peer, headers) => clientAddress(peer, headers, trustedProxies, forwardedHeader),
    ...(metrics && {
      observe: (operation: string | null, status: number, seconds: number) =>
        metrics.request(operation, status, seconds),
    }),
    record: parts.watch.record,
    csrfKey: parts.keys.csrf,
    cookieSecure: config.cookieSecure,
    addressRatePerMinute: config.addressRatePerMinute,
    boardRateScale: config.boardRateScale,
    clock: parts.clock,
  });
}

export function openTransport(parts: {
  config: Config;
  routes: readonly Route[];
  pipeline: Pipeline;
  metrics: NodeMetrics | null;
  drain: Drain;
  sockets: SocketHandlers;
  peers: PeerEndpoint | undefined;
}): HttpServer {
  const { config, pipeline, metrics, drain } = parts;
  /** What a request no route takes is refused with. */
  const refusal = (
    reason: RefusalReason,
    allow?: string[],
  ): { code: ErrorCode; message: string | undefined; headers: Record<string, string> } => ({
    code: REFUSAL[reason],
    message: reason === 'too-large' ? `The body is larger than ${config.bodyLimitBytes} bytes.` : undefined,
    headers: allow
      ? { allow: allow.join(', ') }
      : reason === 'draining'
        ? { connection: 'close', 'retry-after': '1' }
        : {},
  });
  /** A refusal made before any route, counted in the metrics as unmatched. */
  const counted = (response: RawResponse): RawResponse => {
    metrics?.request(UNMATCHED, response.status, 0);
    return response;
  };
  // POST /mcp: a route through the same pipeline, kept out of the route table (and so of the OpenAPI document: it speaks JSON-RPC).
  const mcp = mcpRoute({
    routes: parts.routes,
    run: (route, raw, requestId) => pipeline.run(route, raw, requestId),
    notFound: (requestId) => pipeline.reject('NOT_FOUND', requestId),
  });
  return createHttpServer(
    [...parts.routes, mcp],
    {
      dispatch: (route, raw, requestId) => pipeline.run(route, raw, requestId),
      answerFixed: (route, requestId) => pipeline.answerFixed(route, requestId),
      refuse(reason, requestId, allow) {
        const { code, message, headers } = refusal(reason, allow);
        return counted(pipeline.reject(code, requestId, message, undefined, headers));
      },
      refuseRequest(reason, requestId, request, allow) {
        const { code, message, headers } = refusal(reason, allow);
        return andThen(pipeline.reject(code, requestId, message, undefined, headers, request), counted);
      },
      requestIdOf: (headers) => pipeline.requestIdOf(headers),
      accepting: () => !drain.draining,
      started: () => drain.started(),
      finished: () => drain.finished(),
    },
    config.bodyLimitBytes,
    parts.sockets,
    parts.peers,
  );
}
