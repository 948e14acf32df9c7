// Composition root: reads config, picks adapters, starts the node, drains on SIGTERM.
// What only some configurations use (MongoDB, Redis) is imported when configured, and the server
// itself once the store is open: a second process refused its DATA_DIR, or a node whose store is
// unreachable, exits before loading the rest (node starts cost CPU: tests start many).
import { deriveKeys } from './auth/keys.js';
import { limitHeapGrowth } from './heap-growth.js';
import { serverSecret } from './server-secret.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import type { Bus } from './bus/bus.js';
import type { Notice } from './server/notices.js';
import type { RateLimiter } from './ratelimit/limiter.js';
import type { Store } from '../store/ports/store.js';

/**
 * On MongoDB a node without REDIS_URL is its store's sole writer (it answers from the boards it holds
 * in memory), and holds a lease in the store saying so; with REDIS_URL it is one of several nodes and
 * keeps a heartbeat there. Neither starts beside a live node of the other kind, nor a sole writer
 * beside another (store/mongo/writer-lease.ts). A node that loses its lease exits at once, before it
 * writes from a copy another node now changes.
 */
async function openStore(config: Config, logger: Logger): Promise<Store> {
  if (config.store.kind === 'mongo') {
    const { openMongoStore } = await import('../store/mongo/index.js');
    return openMongoStore({
      uri: config.store.uri,
      db: config.store.db,
      writer: {
        mode: config.redisUrl ? 'shared' : 'sole',
        node: config.nodeId,
        onLost: (message) => {
          logger.error({ node: config.nodeId }, message);
          process.exit(1);
        },
        onRenewalFailed: (cause) =>
          logger.warn({ err: cause }, 'store: could not renew this node’s writer lease, trying again'),
        onTookOver: (message) => logger.warn({ node: config.nodeId }, message),
      },
    });
  }
  const { openEmbeddedStore } = await import('../store/embedded/index.js');
  return openEmbeddedStore(config.store.dataDir);
}

/** With REDIS_URL, events reach every node's sockets; without it, this node's only. */
async function openBus(config: Config, logger: Logger): Promise<Bus<Notice>> {
  if (!config.redisUrl) return new (await import('./bus/bus.js')).MemoryBus<Notice>();
  const { RedisBus } = await import('./bus/redis.js');
  return new RedisBus<Notice>(config.redisUrl, (health, cause) =>
    health === 'degraded'
      ? logger.warn({ err: cause }, 'bus: redis unavailable, events reach this node’s sockets only')
      : logger.info('bus: redis is back, sockets catch up from the log'),
  );
}

/** With REDIS_URL, budgets are shared by every node (this node's own while Redis is away); without it they are this node's own. */
async function openLimiter(config: Config, logger: Logger): Promise<RateLimiter> {
  const { MemoryRateLimiter } = await import('./ratelimit/memory.js');
  if (!config.redisUrl) return new MemoryRateLimiter();
  const [{ Redis }, { RedisRateLimiter }, { FallbackRateLimiter }] = await Promise.all([
    import('ioredis'),
    import('./ratelimit/redis.js'),
    import('./ratelimit/fallback.js'),
  ]);
  // Fail fast rather than queue: a request should not wait for Redis to come back.
  // Auto-pipelining: the budgets drawn in one turn of the event loop go to Redis in one write.
  const redis = new Redis(config.redisUrl, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: 1000,
    enableAutoPipelining: true,
  });
  redis.on('error', () => undefined); // reported once per outage below
  return new FallbackRateLimiter(new RedisRateLimiter(redis), new MemoryRateLimiter(), (scope, cause) =>
    scope === 'node'
      ? logger.warn({ err: cause }, 'rate budgets: redis unavailable, counting on this node')
      : logger.info('rate budgets: shared through redis again'),
  );
}

async function main(): Promise<void> {
  limitHeapGrowth();
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  const logger = createLogger(config.logLevel);
  const keys = deriveKeys(await serverSecret(config));
  const store = await openStore(config, logger);
  const [{ startServer }, { bcryptHasher }, { billingSetupFrom }, { mailerFrom }] = await Promise.all([
    import('./server.js'),
    import('./auth/passwords.js'),
    import('./billing/setup.js'),
    import('./mail/from-config.js'),
  ]);
  const passwords = bcryptHasher(config.bcryptRounds, keys.pepper);
  const homes = config.redisUrl
    ? new (await import('./cluster/redis-homes.js')).RedisHomes(config.redisUrl, {
        onChange: (boardId, change) => logger.debug({ boardId, change }, 'board home'),
      })
    : undefined;
  const server = await startServer({
    config,
    store,
    bus: await openBus(config, logger),
    ...(homes && { homes }),
    limiter: await openLimiter(config, logger),
    passwords,
    keys,
    billing: billingSetupFrom(config),
    mailer: mailerFrom(config, { store, keys }, logger),
    logger,
  });
  logger.info({ port: server.port, store: store.kind }, 'listening');

  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    server.shutdown().then(
      () => process.exit(0),
      (e: unknown) => {
        logger.error({ err: e }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  process.on('unhandledRejection', (e) => logger.error({ err: e }, 'unhandled rejection'));
}

main().catch((e: unknown) => {
  process.stderr.write(`failed to start: ${(e as Error).message}\n`);
  process.exit(1);
});
