// Composition root: reads config, picks adapters, starts the node, drains on SIGTERM.
import { bcryptHasher } from './auth/passwords.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { MemoryBus, type Bus } from './bus/bus.js';
import { RedisBus } from './bus/redis.js';
import { Redis } from 'ioredis';
import type { RateLimiter } from './ratelimit/limiter.js';
import { MemoryRateLimiter } from './ratelimit/memory.js';
import { RedisRateLimiter } from './ratelimit/redis.js';
import { startServer } from './server.js';
import { openEmbeddedStore } from '../store/embedded/index.js';
import { openMongoStore } from '../store/mongo/index.js';
import type { Store } from '../store/ports/store.js';

function openStore(config: Config): Promise<Store> {
  return config.store.kind === 'mongo' ? openMongoStore({ uri: config.store.uri, db: config.store.db }) : openEmbeddedStore(config.store.dataDir);
}

/** With REDIS_URL, events reach every node's sockets; without it, this node's only. */
function openBus(config: Config, logger: Logger): Bus {
  return config.redisUrl ? new RedisBus(config.redisUrl, (e) => logger.warn({ err: e }, 'bus: redis unavailable')) : new MemoryBus();
}

/** With REDIS_URL, budgets are shared by every node; without it they are this node's own. */
function openLimiter(config: Config): RateLimiter {
  return config.redisUrl ? new RedisRateLimiter(new Redis(config.redisUrl, { maxRetriesPerRequest: 2 })) : new MemoryRateLimiter();
}

async function main(): Promise<void> {
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
  const store = await openStore(config);
  const server = await startServer({ config, store, bus: openBus(config, logger), limiter: openLimiter(config), passwords: bcryptHasher(Number(process.env.BCRYPT_ROUNDS ?? 12)), logger });
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
