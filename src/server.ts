// Builds a running node from its parts, each standing on those before it: what the node tells
// about itself, who requests are, its boards, billing and its chores, the routes, the sockets and
// the transport; then it listens, and on shutdown stops them in the reverse order. Adapters are
// chosen by the caller (src/main.ts, or a test), never here.
import type { Logger } from 'pino';
import type { BoardRegistry } from '../actors/registry.js';
import type { Watch } from './admin/watch.js';
import type { HttpServer } from './http/uws.js';
import type { Hub } from './ws/hub.js';
import type { NodeMetrics } from './metrics/metrics.js';
import type { Store } from '../store/ports/store.js';
import { userCodeDigest } from './accounts/device-codes.js';
import { csrfTokenFor } from './auth/csrf.js';
import type { ServerKeys } from './auth/keys.js';
import type { PasswordHasher } from './auth/passwords.js';
import { committedAudit } from './board/committed-audit.js';
import { auditGateBypasses } from './board/override-audit.js';
import { OnlineCounts } from './board/presence.js';
import { BillingReconciler, type ReconcileCounts } from './billing/reconcile.js';
import { registerReconcileMetrics } from './billing/reconcile-metrics.js';
import { BillingService, type BillingSetup } from './billing/service.js';
import { MemoryBus, type Bus } from './bus/bus.js';
import type { Homes } from './cluster/homes.js';
import { defaultNodeUrl } from './cluster/node-url.js';
import type { Config } from './config.js';
import { ResolutionObserver } from './errors/observed-resolution.js';
import { allowedOrigins } from './http/origins.js';
import type { Route } from './http/route.js';
import type { Pipeline } from './http/pipeline.js';
import type { SweepResult } from './accounts/anonymous.js';
import type { Swept } from './admin/deletion.js';
import { logMailer, type Mailer } from './mail/mailer.js';
import { serveMetrics, type MetricsEndpoint } from './metrics/server.js';
import type { RateLimiter } from './ratelimit/limiter.js';
import { routeTable } from './routes/index.js';
import { startAccess, type Access } from './server/access.js';
import { startBoards, type Boards } from './server/boards.js';
import { Drain } from './server/drain.js';
import { NodeGauges } from './server/gauges.js';
import { startHousekeeping, type Housekeeping } from './server/housekeeping.js';
import type { Notice } from './server/notices.js';
import { startSockets, type Sockets } from './server/sockets.js';
import { makePipeline, openTransport } from './server/transport.js';
import { watchNode } from './server/watching.js';
import { loadWebBundle, type WebBundle } from './web/bundle.js';
import { CLOSE } from './ws/protocol.js';

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
  /** Runs the sweep of imports cut short now, at the server's clock (it also runs every hour); answers the boards removed. */
  sweepImports(): Promise<string[]>;
  /** Runs the billing sweep now, at the server's clock (it also runs every minute): lapsed past_due grace, ended complimentary plans. */
  sweepBilling(): Promise<{ lapsed: number; complimentaryEnded: string[] }>;
  /** Runs the billing reconcile pass now, at the server's clock (it also runs at start and every BILLING_RECONCILE_INTERVAL_SECONDS). */
  reconcileBilling(): Promise<ReconcileCounts>;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), closes the store. */
  shutdown(): Promise<void>;
}

export async function startServer(parts: ServerParts): Promise<RunningServer> {
  const { config, logger, keys, homes } = parts;
  const clock = parts.clock ?? Date.now;
  const bus: Bus<Notice> = parts.bus ?? new MemoryBus<Notice>();
  const mailer = parts.mailer ?? logMailer(logger);
  const drain = new Drain();
  const gauges = new NodeGauges(bus);
  const { watch, store, metrics, storeAnswers } = watchNode({ ...parts, clock, bus, gauges, mailer });
  const observer = new ResolutionObserver(clock, (note) => bus.notify(note));
  const access = await startAccess({ config, store, clock, logger, bus, limiter: parts.limiter });
  const bypassed = auditGateBypasses(store, logger);
  const boards = startBoards({
    ...{ config, store, clock, logger, bus, keys, homes },
    committed: (boardId, events) => {
      metrics?.committed(events);
      watch.committed(boardId, events.length);
      bypassed(boardId, events);
    },
    warned: () => metrics?.leaseWarning(),
  });
  const billing = new BillingService(store, parts.billing ?? null, logger, committedAudit(store, logger), config.costs);
  const reconciler = new BillingReconciler(
    store,
    parts.billing ?? null,
    logger,
    config.billingReconcile,
    committedAudit(store, logger),
  );
  if (metrics) registerReconcileMetrics(metrics.registry, reconciler);
  const housekeeping = startHousekeeping({
    ...{ store, clock, logger, billing, reconciler },
    deleted: (swept) => {
      for (const accountId of swept.accounts) bus.notify({ kind: 'revoked', accountId });
      for (const boardId of swept.boards) bus.notify({ kind: 'revoked', boardId });
    },
    revoke: (notice) => bus.notify(notice),
    purged: (purged, error) => watch.purged(purged, error),
  });
  const online = new OnlineCounts(store);
  const routes = routesOf({
    ...{ ...parts, store, clock, bus, mailer, observer, watch, billing, online },
    ...{ access, boards, gauges, drain, storeAnswers },
  });
  const origins = new Set<string>();
  const pipeline = makePipeline({ config, access, observer, logger, keys, watch, metrics, origins, clock });
  const { registry, peers } = boards;
  const sockets = startSockets({ config, store, clock, logger, access, observer, watch, pipeline, registry, bus });
  const transport = openTransport({ config, routes, pipeline, metrics, drain, sockets: sockets.handlers, peers });
  sockets.publishThrough(transport);
  gauges.count({ registry: boards.registry, hub: sockets.hub, inFlight: () => drain.inFlight() });

  hearBus(bus, registry, sockets.hub, [observer, watch.utilization, access.identities, access.allowlist, online]);

  const port = await transport.listen(config.host, config.port);
  for (const origin of allowedOrigins(config, port)) origins.add(origin);
  watch.start();
  const metricsEndpoint = await announce(parts, port, boards.registry, metrics);

  return {
    store,
    port,
    metricsPort: metricsEndpoint?.port ?? null,
    routes,
    inFlight: () => drain.inFlight(),
    sweepAnonymous: housekeeping.sweepAnonymous,
    sweepDeleted: housekeeping.sweepDeleted,
    sweepImports: housekeeping.sweepImports,
    sweepBilling: housekeeping.sweepBilling,
    reconcileBilling: housekeeping.reconcileBilling,
    shutdown: () =>
      stopNode({
        ...parts,
        drain,
        transport,
        pipeline,
        boards,
        sockets,
        housekeeping,
        access,
        watch,
        mailer,
        metricsEndpoint,
        bus,
        store,
      }),
  };
}

/** The route table, handed what its groups use (each takes its own Pick of these). */
function routesOf(n: {
  config: Config;
  store: Store;
  logger: Logger;
  clock: () => number;
  keys: ServerKeys;
  passwords: PasswordHasher;
  web?: WebBundle;
  bus: Bus<Notice>;
  mailer: Mailer;
  observer: ResolutionObserver;
  watch: Watch;
  billing: BillingService;
  online: OnlineCounts;
  access: Access;
  boards: Boards;
  gauges: NodeGauges;
  drain: Drain;
  storeAnswers: () => Promise<boolean>;
}): Route[] {
  const { bus, keys, access, drain } = n;
  return routeTable({
    ...{ config: n.config, store: n.store, online: n.online, observer: n.observer, mailer: n.mailer },
    ...{ logger: n.logger, clock: n.clock, billing: n.billing, watch: n.watch, passwords: n.passwords },
    ...{ operators: access.operators, allowlist: access.allowlist, selector: access.selector, limiter: access.limiter },
    boards: n.boards.access,
    readiness: async () =>
      drain.draining ? 'draining' : (await n.storeAnswers()) ? null : 'the store does not answer',
    busHealth: () => bus.health,
    sockets: n.gauges.sockets,
    revoke: (notice) => bus.notify(notice),
    notify: (notice) => bus.notify(notice),
    membership: (notice) => bus.notify(notice),
    csrfToken: (sessionId) => csrfTokenFor(keys.csrf, sessionId),
    userCodeDigest: (userCode) => userCodeDigest(keys.userCode, userCode),
    web: n.web ?? loadWebBundle(),
  });
}

/** Once listening: takes part in board homes, says how client addresses are read, and serves /metrics on its own port when asked. */
async function announce(
  parts: ServerParts,
  port: number,
  registry: Pick<BoardRegistry, 'has'>,
  metrics: NodeMetrics | null,
): Promise<MetricsEndpoint | null> {
  const { config, logger, homes } = parts;
  if (homes) {
    const self = { node: config.nodeId, url: config.nodeUrl ?? defaultNodeUrl(config.host, port) };
    homes.start(self, (boardId) => registry.has(boardId));
    logger.info(self, 'board homes: each board is decided on one node at a time; peers forward to it here');
  }
  if (config.trustedProxies.entries.length)
    logger.info(
      { trustedProxies: config.trustedProxies.entries, header: config.forwardedHeader },
      'client addresses: taken from the forwarding header of trusted proxies only',
    );
  const metricsEndpoint =
    metrics && config.metrics ? await serveMetrics(metrics.registry, config.metrics, logger) : null;
  if (metricsEndpoint)
    logger.info(
      { metricsPort: metricsEndpoint.port, token: config.metrics?.token !== undefined },
      'metrics: GET /metrics served on its own port',
    );

  return metricsEndpoint;
}

/** Stops taking requests, lets those in flight finish (up to the grace period), then stops every part, the store last. */
async function stopNode(n: {
  config: Config;
  logger: Logger;
  drain: Drain;
  transport: HttpServer;
  pipeline: Pick<Pipeline, 'close'>;
  boards: Boards;
  sockets: Sockets;
  housekeeping: Housekeeping;
  access: Access;
  watch: Watch;
  mailer: Mailer;
  metricsEndpoint: MetricsEndpoint | null;
  bus: Bus<Notice>;
  store: Store;
}): Promise<void> {
  const { config, drain } = n;
  if (!drain.begin()) return;
  n.transport.stopListening();
  // Peers take this node's boards now, not once the requests in flight here have finished.
  await n.boards.giveUpHomes();
  await drain.settled(config.shutdownGraceMs);
  n.pipeline.close();
  await n.boards.close();
  n.sockets.stop();
  await n.housekeeping.stop();
  n.access.allowlist.stop();
  n.sockets.hub.closeAll(CLOSE.shutdown, 'the node is shutting down');
  await n.boards.registry.stop();
  await n.watch.stop();
  await n.mailer.close?.(Math.min(config.shutdownGraceMs, 5000));
  await n.metricsEndpoint?.close();
  await n.bus.close();
  await n.store.close();
  n.logger.info({ inFlight: drain.inFlight() }, 'drained');
}

/**
 * Commits from the bus reach this node's boards and sockets. This node receives another node's
 * commits only to the boards it asked for (those it is home to, and those its sockets watch: the
 * bus's `hear`); one matters to a board when it is loaded (it is behind now) and to the sockets
 * watching the board, and the rest are not read (a holder hears its lease's end as a notice).
 * Each part hears the notices it declares (its `hears`; src/server/notices.ts names them all).
 */
function hearBus(
  bus: Bus<Notice>,
  registry: Pick<BoardRegistry, 'saw' | 'holds'>,
  hub: Hub,
  parts: readonly { hears: Parameters<Bus<Notice>['listen']>[0] }[],
): void {
  bus.subscribe(
    (boardId, events) => {
      registry.saw(boardId, events.at(-1)?.seq ?? 0);
      hub.deliver(boardId, events);
    },
    (boardId) => registry.holds(boardId) || hub.watches(boardId),
    // A board's own channel is kept for its actor and its subscribers; a firehose hears by the pattern.
    (boardId) => registry.holds(boardId) || hub.subscribedTo(boardId),
  );
  for (const part of [...parts, hub]) bus.listen(part.hears);
}
