// GET /api/admin/codebase: what is running here. The build (package version, BUILD_COMMIT when the
// image was built with it), Node and the engines' versions, the store and bus kinds, this node,
// when it started, and the configuration with every secret and URL credential redacted.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Config } from '../config.js';

const require = createRequire(import.meta.url);
const REDACTED = '[redacted]';

function versionOf(pkg: string): string | null {
  try {
    return (require(`${pkg}/package.json`) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

/** The service's own package.json: two levels up from src/admin when run from source, three from dist/src/admin when built. */
function ownPackage(): { name: string; version: string } {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name && pkg.version) return { name: pkg.name, version: pkg.version };
    } catch {
      // not there: one more level up
    }
  }
  return { name: 'agent-board', version: 'unknown' };
}

const own = ownPackage();

/** A URL with its user and password replaced. */
export function withoutCredentials(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      u.username = REDACTED;
      u.password = '';
    }
    return u.toString();
  } catch {
    return REDACTED;
  }
}

export interface Codebase {
  name: string;
  version: string;
  commit: string | null;
  node: string;
  engines: Record<string, string | null>;
  store: Config['store']['kind'];
  bus: 'local' | 'redis';
  nodeId: string;
  startedAt: string;
  configuration: Record<string, unknown>;
}

export function codebase(config: Config, startedAt: number): Codebase {
  return {
    name: own.name,
    version: own.version,
    commit: process.env.BUILD_COMMIT ?? null,
    node: process.version,
    engines: Object.fromEntries(
      [
        'uWebSockets.js',
        'xstate',
        'mongodb',
        'lmdb',
        'ioredis',
        'stripe',
        'zod',
        'pino',
        'nodemailer',
        'prom-client',
      ].map((p) => [p, versionOf(p)]),
    ),
    store: config.store.kind,
    bus: config.redisUrl ? 'redis' : 'local',
    nodeId: config.nodeId,
    startedAt: new Date(startedAt).toISOString(),
    configuration: redacted(config),
  };
}

/** Every setting, secrets replaced by `[redacted]` (whether set is still shown), URLs without credentials. */
export function redacted(config: Config): Record<string, unknown> {
  const set = (value: string | undefined) => (value === undefined ? null : REDACTED);
  return {
    ...config,
    store:
      config.store.kind === 'mongo'
        ? { kind: 'mongo', uri: withoutCredentials(config.store.uri), db: config.store.db }
        : config.store,
    redisUrl: withoutCredentials(config.redisUrl),
    trustedProxies: config.trustedProxies.entries,
    mail: { ...config.mail, smtpUrl: withoutCredentials(config.mail.smtpUrl) },
    metrics: config.metrics && { ...config.metrics, token: set(config.metrics.token) },
    secretKey: set(config.secretKey),
    stripe: {
      ...config.stripe,
      secretKey: set(config.stripe.secretKey),
      webhookSecret: set(config.stripe.webhookSecret),
    },
  };
}
