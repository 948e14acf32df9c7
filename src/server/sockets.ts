// The node's sockets at GET /api/ws: the upgrade is authenticated and capped like a request, then
// the hub speaks the protocol, reading boards through their feed; operators' watches are audited
// with the upgrade request behind them. Credentials are checked again every minute.
import type { Logger } from 'pino';
import type { BoardRegistry } from '../../actors/registry.js';
import type { Store } from '../../store/ports/store.js';
import { auditOperatorAction } from '../admin/audit.js';
import type { Watch } from '../admin/watch.js';
import type { RequestOrigin } from '../audit-row.js';
import { ownIdentity, type Identity } from '../auth/identity.js';
import { ownStrings } from '../auth/own-strings.js';
import { BoardFeed } from '../board/feed/feed.js';
import type { Bus } from '../bus/bus.js';
import type { Config } from '../config.js';
import { AppError } from '../errors/app-error.js';
import type { ResolutionObserver } from '../errors/observed-resolution.js';
import { parseCookies } from '../http/cookies.js';
import type { Pipeline } from '../http/pipeline.js';
import { clientAddress } from '../http/trusted-proxies.js';
import type { HttpServer, SocketHandlers } from '../http/uws.js';
import { Hub } from '../ws/hub.js';
import { mayBeOperator, OperatorAccess } from '../ws/operator-access.js';
import { SLOW_CONSUMER } from '../ws/protocol.js';
import { SocketCap } from '../ws/socket-cap.js';
import type { Access } from './access.js';
import type { Notice } from './notices.js';

/** How often sockets' credentials are checked again (expiry; revocations a node missed while the bus was down). */
const REVALIDATE_SOCKETS_MS = 60_000;

export interface SocketsParts {
  config: Config;
  store: Store;
  clock: () => number;
  logger: Logger;
  access: Access;
  observer: ResolutionObserver;
  watch: Watch;
  registry: BoardRegistry;
  pipeline: Pipeline;
  /** What the hub asks of the bus: other nodes' commits to the boards its sockets watch. */
  bus: Pick<Bus<Notice>, 'hear' | 'hearAll'>;
}

export interface Sockets {
  hub: Hub;
  handlers: SocketHandlers;
  /** The transport the hub publishes topic messages through: it carries these sockets, so it is opened after them. */
  publishThrough(transport: Pick<HttpServer, 'publish'>): void;
  stop(): void;
}

export function startSockets(parts: SocketsParts): Sockets {
  const { config, store, clock, access, bus } = parts;
  /** The upgrade request behind each socket (by its own identity object), for the audit rows of operators' subscriptions. */
  const origins = new WeakMap<Identity, RequestOrigin>();
  let transport: Pick<HttpServer, 'publish'> | null = null;
  const hub = new Hub({
    selector: access.selector,
    store,
    observer: parts.observer,
    publicUrl: config.publicUrl,
    clock,
    // No socket is open before the transport is, so nothing is published before it is named.
    publish: (topic, message) => transport?.publish(topic, message),
    hear: (boardId) => bus.hear(boardId),
    hearAll: (on) => bus.hearAll(on),
    feed: new BoardFeed({
      store,
      syncLog: (boardId) => parts.registry.get(boardId).syncLog(),
      readBoard: (boardId) => parts.registry.get(boardId).read(),
      clock,
    }),
    stillValid: (identity) => access.authenticator.stillValid(identity, clock()),
    onOverBudget: (identity) => parts.watch.overBudget(identity),
    operators: new OperatorAccess({
      store,
      audit: (ctx, action) => auditOperatorAction(store, ctx, action),
      isOperator: (accountId) => access.operators.isOperator(accountId),
      originOf: (identity) => origins.get(identity),
      clock,
    }),
  });
  // Each socket's time counts from when the hub saw it open: the usage counters keep nothing per socket.
  parts.watch.countSockets(hub);
  const revalidation = setInterval(() => void hub.revalidate(), REVALIDATE_SOCKETS_MS);
  revalidation.unref();
  return {
    hub,
    handlers: socketHandlers(parts, hub, origins),
    publishThrough: (to) => void (transport = to),
    stop: () => clearInterval(revalidation),
  };
}

function socketHandlers(parts: SocketsParts, hub: Hub, origins: WeakMap<Identity, RequestOrigin>): SocketHandlers {
  const { config, clock, logger, access, pipeline, watch } = parts;
  const cap = new SocketCap({ limiter: access.limiter, selector: access.selector, scale: config.boardRateScale });
  return {
    path: '/api/ws',
    maxPayloadLength: 64 * 1024,
    maxBackpressure: SLOW_CONSUMER.bytes,
    idleTimeoutSeconds: 60,
    async authenticate(headers, requestId, peer) {
      if (pipeline.crossSite(headers))
        return {
          refuse: pipeline.reject(
            'CSRF_REJECTED',
            requestId,
            'A browser socket must come from the service’s own origin.',
          ),
        };
      try {
        const shared = (await access.authenticator.authenticate(
          'bearer-or-session',
          headers,
          parseCookies(headers.cookie ?? ''),
          clock(),
        ))!;
        // Requests with one credential share an identity (src/auth/authenticator.ts), and so do its
        // sockets: a socket's place under the cap is kept by its connection. Only a socket whose
        // upgrade's origin is kept has a copy of its own, by which the origin is found.
        const operator = mayBeOperator(shared);
        const identity = operator ? ownIdentity(shared) : shared;
        const address = clientAddress(peer, headers, config.trustedProxies, config.forwardedHeader);
        await cap.admit(identity, address, clock());
        // Kept only where an audit row may ask for it, each string flat and its own (a generated
        // request id is made of 16 pieces, 450 bytes of heap as it comes).
        if (operator) origins.set(identity, ownStrings({ requestId, address }));
        return { identity };
      } catch (e) {
        // A RATE_LIMITED refusal carries its cap or budget in details and the nine rate headers, as a REST refusal does.
        const error = e instanceof AppError ? e : new AppError('AUTH_UNAVAILABLE');
        return { refuse: pipeline.reject(error.code, requestId, error.message, error.details, error.headers) };
      }
    },
    open: (conn) => {
      cap.opened(conn);
      hub.open(conn);
    },
    message: (conn, text) =>
      void hub.message(conn, text).catch((e: unknown) => logger.error({ err: e }, 'socket message failed')),
    close: (conn) => {
      cap.closed(conn);
      watch.socketClosed(conn);
      hub.close(conn);
    },
  };
}
