// Builds a running node from its parts: route table, pipeline, transport, drain on shutdown.
// Adapters are chosen by the caller (src/main.ts, or a test), never here.
import type { Logger } from 'pino';
import { Authenticator } from './auth/authenticator.js';
import { IdentityCache, recordChanges } from './auth/identity-cache.js';
import { OnlineCounts } from './board/presence.js';
import { ProjectSelector } from './auth/project-selection.js';
import { BoardAccess } from './board/board-access.js';
import { BoardRegistry } from '../actors/registry.js';
import { logMailer, type Mailer } from './mail/mailer.js';
import { MemoryBus, type Bus } from './bus/bus.js';
import type { Notice } from './server/notices.js';
import { Hub } from './ws/hub.js';
import { OperatorAccess } from './ws/operator-access.js';
import { BoardFeed } from './board/feed/feed.js';
import { auditOperatorAction } from './admin/audit.js';
import { SocketCap } from './ws/socket-cap.js';
import type { Identity } from './auth/identity.js';
import type { RequestOrigin } from './audit-row.js';
import { CLOSE } from './ws/protocol.js';
import { parseCookies } from './http/cookies.js';
import { AppError } from './errors/app-error.js';
import type { PasswordHasher } from './auth/passwords.js';
import { csrfTokenFor } from './auth/csrf.js';
import type { ServerKeys } from './auth/keys.js';
import { loadWebBundle, type WebBundle } from './web/bundle.js';
import { BillingService, type BillingSetup } from './billing/service.js';
import { BillingReconciler, type ReconcileCounts } from './billing/reconcile.js';
import { registerReconcileMetrics } from './billing/reconcile-metrics.js';
import type { Config } from './config.js';
import { ResolutionObserver } from './errors/observed-resolution.js';
import { OperatorGate } from './admin/gate.js';
import { Allowlist } from './admin/allowlist.js';
import { noticeLapsed } from './admin/impersonation.js';
import { withExemption } from './ratelimit/exempt.js';
import { AccountDeletion, type Swept } from './admin/deletion.js';
import { Watch } from './admin/watch.js';
import { Pipeline, type RawResponse } from './http/pipeline.js';
import { createHttpServer, type RefusalReason, type SocketHandlers } from './http/uws.js';
import type { RateLimiter } from './ratelimit/limiter.js';
import type { Route } from './http/route.js';
import { routeTable } from './routes/index.js';
import { mcpRoute } from './mcp/http.js';
import { schedulePurges } from './board/retention.js';
import { captureQuiet } from './board/restore-points.js';
import { sweepAnonymous, type SweepResult } from './accounts/anonymous.js';
import { userCodeDigest } from './accounts/device-codes.js';
import type { ErrorCode } from './errors/registry.js';
import { allowedOrigins } from './http/origins.js';
import { clientAddress } from './http/trusted-proxies.js';
import { NodeMetrics, UNMATCHED } from './metrics/metrics.js';
import { serveMetrics, type MetricsEndpoint } from './metrics/server.js';
import type { Store } from '../store/ports/store.js';
import { andThen } from '../store/ports/maybe.js';
import { homeCurrency, type Homes } from './cluster/homes.js';
import { BoardRouter } from './cluster/board-router.js';
import { Forwarder } from './cluster/forwarder.js';
import { forwardEndpoint } from './cluster/forward-endpoint.js';
import { EnvelopeOpener } from './cluster/signed-envelope.js';
import { defaultNodeUrl } from './cluster/node-url.js';

export interface ServerParts {
  config: Config;
  store: Store;
  limiter: RateLimiter;
  passwords: PasswordHasher;
  /** Derived from the server secret (src/server-secret.ts). */
  keys: ServerKeys;
  /** Defaults to the in-process bus (one node). */
  bus?: Bus<Notice>;
  /** Board homes across nodes (src/cluster/); absent, this node decides every board (one node). */
  homes?: Homes;
  /** The payment provider and prices; null or absent: billing answers 503 BILLING_UNAVAILABLE. */
  billing?: BillingSetup | null;
  /** Defaults to the build in dist/web. */
  web?: WebBundle;
  /** Defaults to writing mail to the log (src/main.ts picks SMTP from the configuration). */
  mailer?: Mailer;
  logger: Logger;
  clock?: () => number;
}

export interface RunningServer {
  port: number;
  /** The store as this node uses it: its writes to what credentials are read from are told to every node's identity cache. */
  store: Store;
  /** Where GET /metrics is served (METRICS_PORT), or null without it. */
  metricsPort: number | null;
  /** The route table this node serves. */
  routes: readonly Route[];
  /** Requests accepted and not yet answered or abandoned. */
  inFlight(): number;
  /** Runs the anonymous-account sweep now, at the server's clock (it also runs every hour). */
  sweepAnonymous(): Promise<SweepResult>;
  /** Runs the purge of deleted accounts past their 30 days now, at the server's clock (it also runs every hour). */
  sweepDeleted(): Promise<Swept>;
  /** Runs the billing sweep now, at the server's clock (it also runs every minute): lapsed past_due grace, ended complimentary plans. */
  sweepBilling(): Promise<{ lapsed: number; complimentaryEnded: string[] }>;
  /** Runs the billing reconcile pass now, at the server's clock (it also runs at start and every BILLING_RECONCILE_INTERVAL_SECONDS). */
  reconcileBilling(): Promise<ReconcileCounts>;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), closes the store. */
  shutdown(): Promise<void>;
}

/** How often boards whose past_due grace ran out are turned Free, and complimentary plans that ended fall back to billing's. */
const BILLING_SWEEP_MS = 60_000;

/** How often anonymous accounts past their 7 days are deleted (and expired codes and nonces). */
const ANONYMOUS_SWEEP_MS = 3_600_000;

/** How often deleted accounts past their 30 days are purged. */
const DELETED_SWEEP_MS = 3_600_000;

/** How often sockets' credentials are checked again (expiry; revocations a node missed while the bus was down). */
const REVALIDATE_SOCKETS_MS = 60_000;

const REFUSAL: Record<RefusalReason, ErrorCode> = {
  'not-found': 'NOT_FOUND',
  'method-not-allowed': 'METHOD_NOT_ALLOWED',
  'too-large': 'BODY_TOO_LARGE',
  draining: 'SERVICE_UNAVAILABLE',
  internal: 'INTERNAL',
};

export async function startServer(parts: ServerParts): Promise<RunningServer> {
  const { config, logger } = parts;
  const clock = parts.clock ?? Date.now;
  const bus: Bus<Notice> = parts.bus ?? new MemoryBus<Notice>();
  // The operators' usage counters and node figures (src/admin/watch.ts); board commits are timed through its store.
  const watch: Watch = new Watch({
    nodeId: config.nodeId,
    store: parts.store,
    clock,
    logger,
    publish: (figures) => bus.notify({ kind: 'node.figures', figures }),
    sources: {
      boardsActive: () => registry.size,
      sockets: () => hub.size,
      inFlight: () => inFlight,
      leaseTimers: () => registry.leaseTimers,
      mailboxDepth: () => registry.waiting,
      bus: () => bus.health,
    },
  });
  // Every write to what credentials and project selection read tells every node, for their identity caches.
  const store: Store = recordChanges(watch.store, (collection, ids) =>
    bus.notify({ kind: 'records.changed', collection, ids }),
  );
  const identities = new IdentityCache(store, {
    hearsNotices: () => bus.health !== 'degraded',
    interruptions: () => bus.interruptions,
    clock,
  });
  let draining = false;
  let inFlight = 0;
  let idle: (() => void) | null = null;

  const storeAnswers = async (): Promise<boolean> => {
    try {
      await Promise.race([
        store.ping(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref()),
      ]);
      return true;
    } catch {
      return false;
    }
  };
  const readiness = async (): Promise<string | null> =>
    draining ? 'draining' : (await storeAnswers()) ? null : 'the store does not answer';
  const mailer = parts.mailer ?? logMailer(logger);
  // Only with a metrics port: without one, requests pay nothing for metrics.
  const metrics = config.metrics
    ? new NodeMetrics({
        actors: () => registry.size,
        mailboxes: () => registry.waiting,
        leaseTimers: () => registry.leaseTimers,
        sockets: () => hub.size,
        inFlight: () => inFlight,
        bus: () => bus.health,
        storeUp: storeAnswers,
        mail: () => mailer.stats?.(),
      })
    : null;

  const selector = new ProjectSelector(identities);
  const observer = new ResolutionObserver(clock, (note) => bus.notify(note));
  const registry = new BoardRegistry(store, {
    clock,
    onCommit: (boardId, events) => {
      metrics?.committed(events);
      watch.committed(boardId, events.length);
      bus.publish(boardId, events);
    },
    onWarning: (boardId, w) => {
      metrics?.leaseWarning();
      bus.notify({ kind: 'lease.expiring', boardId, workId: w.workId, holder: w.holder, expiresAt: w.expiresAt });
    },
    onListenerError: (e) => logger.error({ err: e }, 'a commit listener failed; the command itself was committed'),
    onQuiet: (boardId, before) =>
      void captureQuiet(store, boardId, before, clock()).catch((e: unknown) =>
        logger.warn({ err: e, boardId }, 'restore points: the quiet-spell point was not kept'),
      ),
    expire: (boardId): Promise<unknown> => router.ask(boardId, { kind: 'expire' }),
    // Only a board's home decides: while it surely holds the lease and its bus stayed up, nothing changes its board unseen.
    ...(parts.homes && { currency: (boardId: string) => homeCurrency(parts.homes!.tenure(boardId), bus) }),
  });
  const { homes } = parts;
  const forwarder = homes ? new Forwarder(parts.keys.forward, config.nodeId, clock, config.bodyLimitBytes) : null;
  let homesReportedAt = -Infinity;
  const router: BoardRouter = new BoardRouter({
    registry,
    points: store,
    clock,
    ...(homes && forwarder && { cluster: { homes, forwarder } }),
    onHomesUnavailable(e) {
      if (clock() - homesReportedAt < 10_000) return;
      homesReportedAt = clock();
      logger.warn(
        { err: e },
        'board homes: redis unavailable, so this node cannot learn which node decides a board: its commands answer 503 BOARD_BUSY until it can',
      );
    },
    ...(homes &&
      logger.isLevelEnabled('debug') && {
        onDecided: (boardId: string, command: string, forwarded: boolean) =>
          logger.debug({ boardId, command, forwarded }, 'board command decided here'),
      }),
  });
  registry.start();
  const billing = new BillingService(store, parts.billing ?? null, logger);
  const graceSweep = setInterval(
    () =>
      void billing
        .sweep(clock())
        .catch((e: unknown) =>
          logger.warn(
            { err: e },
            'billing: the sweep (past_due grace, complimentary plans) failed; retried next minute',
          ),
        ),
    BILLING_SWEEP_MS,
  );
  graceSweep.unref();
  const reconciler = new BillingReconciler(store, parts.billing ?? null, logger, config.billingReconcile);
  if (metrics) registerReconcileMetrics(metrics.registry, reconciler);
  reconciler.start(clock);
  const anonymousSweep = async (): Promise<SweepResult> => {
    const swept = await sweepAnonymous(store, clock());
    for (const accountId of swept.accounts) bus.notify({ kind: 'revoked', accountId });
    for (const boardId of swept.boards) bus.notify({ kind: 'revoked', boardId });
    if (swept.accounts.length)
      logger.info(
        { accounts: swept.accounts.length, boards: swept.boards.length },
        'onboarding: deleted anonymous accounts left unclaimed',
      );
    return swept;
  };
  const anonSweep = setInterval(
    () =>
      void anonymousSweep().catch((e: unknown) =>
        logger.warn({ err: e }, 'onboarding: the anonymous-account sweep failed; retried next hour'),
      ),
    ANONYMOUS_SWEEP_MS,
  );
  anonSweep.unref();
  const deletion = new AccountDeletion(store, (accountId) => billing.cancelLiveSubscriptions(accountId));
  const deletedSweep = async (): Promise<Swept> => {
    const swept = await deletion.sweep(clock());
    for (const accountId of swept.accounts) bus.notify({ kind: 'revoked', accountId });
    for (const boardId of swept.boards) bus.notify({ kind: 'revoked', boardId });
    if (swept.accounts.length)
      logger.info(
        { accounts: swept.accounts.length, boards: swept.boards.length },
        'accounts: purged deleted accounts past their 30 days',
      );
    return swept;
  };
  const purgeSweep = setInterval(
    () =>
      void deletedSweep().catch((e: unknown) =>
        logger.warn({ err: e }, 'accounts: the purge of deleted accounts failed; retried next hour'),
      ),
    DELETED_SWEEP_MS,
  );
  purgeSweep.unref();
  const stopPurges = schedulePurges(store, clock, (purged, error) => {
    watch.purged(purged, error);
    if (error) logger.warn({ err: error }, 'retention: purge failed, retried on the next round');
    else if (purged && Object.values(purged).some((n) => n > 0))
      logger.info({ purged }, 'retention: purged what aged out');
  });
  const boards = new BoardAccess(registry, router);
  const authenticator = new Authenticator(
    store,
    { impersonationLapsed: (session, now) => noticeLapsed(store, session, now) },
    identities,
  );
  const allowlist = new Allowlist(store, logger, () => bus.notify({ kind: 'allowlist.changed' }));
  await allowlist.start();
  const limiter = withExemption(parts.limiter, allowlist);
  const operators = new OperatorGate(authenticator, store, config.operatorEmails);
  const online = new OnlineCounts(store);
  const routes = routeTable({
    config,
    store,
    online,
    observer,
    operators,
    allowlist,
    passwords: parts.passwords,
    mailer,
    selector,
    boards,
    logger,
    clock,
    readiness,
    busHealth: () => bus.health,
    sockets: () => hub.size,
    revoke: (notice) => bus.notify(notice),
    notify: (notice) => bus.notify(notice),
    membership: (notice) => bus.notify(notice),
    csrfToken: (sessionId) => csrfTokenFor(parts.keys.csrf, sessionId),
    userCodeDigest: (userCode) => userCodeDigest(parts.keys.userCode, userCode),
    limiter,
    web: parts.web ?? loadWebBundle(),
    billing,
    watch,
  });
  // Filled once the node listens: without PUBLIC_URL the accepted origins name the port taken.
  const origins = new Set<string>();
  const { trustedProxies, forwardedHeader } = config;
  const observe =
    metrics &&
    ((operation: string | null, status: number, seconds: number) => metrics.request(operation, status, seconds));
  const pipeline = new Pipeline({
    authenticator,
    operators,
    selector,
    limiter,
    observer,
    logger,
    publicUrl: config.publicUrl,
    allowedOrigins: origins,
    clientAddress: (peer, headers) => clientAddress(peer, headers, trustedProxies, forwardedHeader),
    ...(observe && { observe }),
    record: watch.record,
    csrfKey: parts.keys.csrf,
    cookieSecure: config.cookieSecure,
    addressRatePerMinute: config.addressRatePerMinute,
    boardRateScale: config.boardRateScale,
    clock,
  });

  /** The upgrade request behind each socket (by its own identity object), for the audit rows of operators' subscriptions. */
  const socketOrigins = new WeakMap<Identity, RequestOrigin>();
  const operatorSockets = new OperatorAccess({
    store,
    audit: (ctx, action) => auditOperatorAction(store, ctx, action),
    isOperator: (accountId) => operators.isOperator(accountId),
    originOf: (identity) => socketOrigins.get(identity),
    clock,
  });
  const hub = new Hub({
    selector,
    store,
    observer,
    publicUrl: config.publicUrl,
    clock,
    publish: (topic, message) => http.publish(topic, message),
    feed: new BoardFeed({
      store,
      syncLog: (boardId) => registry.get(boardId).syncLog(),
      readBoard: (boardId) => registry.get(boardId).read(),
      clock,
    }),
    stillValid: (identity) => authenticator.stillValid(identity, clock()),
    onOverBudget: (identity) => watch.overBudget(identity),
    operators: operatorSockets,
  });
  const revalidation = setInterval(() => void hub.revalidate(), REVALIDATE_SOCKETS_MS);
  revalidation.unref();
  // Another node's commit matters here to this board when it is loaded (it is behind now) and to
  // sockets: any socket, as a lease's holder hears its end without watching the board.
  bus.subscribe(
    (boardId, events) => {
      registry.saw(boardId, events.at(-1)?.seq ?? 0);
      hub.deliver(boardId, events);
    },
    (boardId) => registry.holds(boardId) || hub.size > 0,
  );
  // Each part hears the notices it declares (src/server/notices.ts names them all).
  for (const part of [observer, watch.utilization, identities, allowlist, online, hub]) bus.listen(part.hears);
  const socketCap = new SocketCap({ limiter, selector, scale: config.boardRateScale });
  const sockets: SocketHandlers = {
    path: '/api/ws',
    maxPayloadLength: 64 * 1024,
    maxBackpressure: 1024 * 1024,
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
        // The socket's own copy: requests with one credential share an identity (src/auth/authenticator.ts), and its origin is kept by it.
        const identity = {
          ...(await authenticator.authenticate(
            'bearer-or-session',
            headers,
            parseCookies(headers.cookie ?? ''),
            clock(),
          ))!,
        };
        const address = clientAddress(peer, headers, trustedProxies, forwardedHeader);
        await socketCap.admit(identity, address, clock());
        socketOrigins.set(identity, { requestId, address });
        return { identity };
      } catch (e) {
        // A RATE_LIMITED refusal carries its cap or budget in details and the nine rate headers, as a REST refusal does.
        const error = e instanceof AppError ? e : new AppError('AUTH_UNAVAILABLE');
        return { refuse: pipeline.reject(error.code, requestId, error.message, error.details, error.headers) };
      }
    },
    open: (conn) => {
      socketCap.opened(conn.identity);
      watch.socketOpened(conn, conn.identity);
      hub.open(conn);
    },
    message: (conn, text) =>
      void hub.message(conn, text).catch((e: unknown) => logger.error({ err: e }, 'socket message failed')),
    close: (conn) => {
      socketCap.closed(conn.identity);
      watch.socketClosed(conn);
      hub.close(conn);
    },
  };

  /** What a request no route takes (src/http/uws.ts) is refused with. */
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
    routes,
    run: (route, raw, requestId) => pipeline.run(route, raw, requestId),
    notFound: (requestId) => pipeline.reject('NOT_FOUND', requestId),
  });
  const http = createHttpServer(
    [...routes, mcp],
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
      accepting: () => !draining,
      started: () => void inFlight++,
      finished() {
        inFlight--;
        if (inFlight === 0) idle?.();
      },
    },
    config.bodyLimitBytes,
    sockets,
    homes &&
      forwardEndpoint(
        parts.keys.forward,
        new EnvelopeOpener(parts.keys.forward, config.nodeId, clock),
        router,
        (peer, what) =>
          logger.warn(
            { peer },
            what === 'hello'
              ? 'board homes: refused a peer channel whose hello did not open (signature, addressee, stamp or reuse)'
              : 'board homes: closed a peer channel on a frame that did not open (signature, number or form)',
          ),
        config.bodyLimitBytes,
      ),
  );
  const port = await http.listen(config.host, config.port);
  for (const origin of allowedOrigins(config, port)) origins.add(origin);
  watch.start();
  if (homes) {
    const self = { node: config.nodeId, url: config.nodeUrl ?? defaultNodeUrl(config.host, port) };
    homes.start(self, (boardId) => registry.has(boardId));
    logger.info(self, 'board homes: each board is decided on one node at a time; peers forward to it here');
  }
  if (trustedProxies.entries.length)
    logger.info(
      { trustedProxies: trustedProxies.entries, header: forwardedHeader },
      'client addresses: taken from the forwarding header of trusted proxies only',
    );
  let metricsEndpoint: MetricsEndpoint | null = null;
  if (metrics && config.metrics) {
    metricsEndpoint = await serveMetrics(metrics.registry, config.metrics, logger);
    logger.info(
      { metricsPort: metricsEndpoint.port, token: config.metrics.token !== undefined },
      'metrics: GET /metrics served on its own port',
    );
  }

  return {
    store,
    port,
    metricsPort: metricsEndpoint?.port ?? null,
    routes,
    inFlight: () => inFlight,
    sweepAnonymous: anonymousSweep,
    sweepDeleted: deletedSweep,
    sweepBilling: () => billing.sweep(clock()),
    reconcileBilling: () => reconciler.pass(clock()),
    async shutdown() {
      if (draining) return;
      draining = true;
      http.stopListening();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          idle = resolve;
          setTimeout(resolve, config.shutdownGraceMs).unref();
        });
      }
      await homes?.close();
      forwarder?.close();
      clearInterval(revalidation);
      clearInterval(graceSweep);
      await reconciler.stop();
      clearInterval(anonSweep);
      allowlist.stop();
      clearInterval(purgeSweep);
      stopPurges();
      hub.closeAll(CLOSE.shutdown, 'the node is shutting down');
      await registry.stop();
      await watch.stop();
      await mailer.close?.(Math.min(config.shutdownGraceMs, 5000));
      await metricsEndpoint?.close();
      await bus.close();
      await store.close();
      logger.info({ inFlight }, 'drained');
    },
  };
}
