// Configuration from the environment, validated once at start; a bad value names its variable.
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { z } from 'zod';
import { ADDRESS_BUDGET } from './plans.js';
import { parseProxyList, type ProxyList } from './address-list.js';

/** BODY_LIMIT_BYTES's default: the most a request body may be, but on a route that allows more. */
export const BODY_LIMIT_BYTES = 256 * 1024;

const port = z.coerce.number().int().min(0).max(65535);
const bool = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');
/** An amount in US dollars (a unit cost or a price). */
const money = z.coerce.number().min(0).max(1_000_000);

const EnvSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  STORE: z.enum(['embedded', 'mongo']).default('embedded'),
  DATA_DIR: z.string().min(1).default('./data'),
  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
    .optional(),
  MONGODB_DB: z.string().min(1).default('board'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .optional(),
  /** This node's name among its peers (several nodes, with REDIS_URL); defaults to <hostname>-<pid>. */
  NODE_ID: z
    .string()
    .regex(/^[\w.-]{1,64}$/, 'must be 1 to 64 letters, digits, dots, dashes or underscores')
    .optional(),
  /** How peers reach this node (an internal address); defaults to http://<this host's first IPv4 address>:PORT. */
  NODE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Without it: http://localhost:PORT, and the page is accepted at localhost, 127.0.0.1 and [::1] (src/http/origins.ts). */
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** More origins a browser may write from (a second hostname), comma-separated. */
  ALLOWED_ORIGINS: z
    .string()
    .optional()
    .transform((v, ctx) => originList(v, ctx)),
  /** Peers (addresses or CIDRs, comma-separated) whose forwarding header names the client. */
  TRUSTED_PROXIES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        return parseProxyList(v ?? '');
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return z.NEVER;
      }
    }),
  /** Which header the trusted proxies write; the other is ignored (a client could send it through). */
  FORWARDED_HEADER: z.enum(['x-forwarded-for', 'forwarded']).default('x-forwarded-for'),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^/\s]+/, 'must be smtp://[user:pass@]host[:port] or smtps://…')
    .optional(),
  MAIL_FROM: z
    .string()
    .max(320)
    .regex(/^(?:[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/, 'must be an address, or "Name <address>"')
    .optional(),
  /** How long past its due time a node keeps a message it holds before any other node may send it (its holder died). */
  MAIL_TAKEOVER_SECONDS: z.coerce.number().int().min(1).max(86_400).default(120),
  /** The service's operators (DOMAIN.md "Operators"): account emails, comma-separated; only their sessions reach /api/admin and /admin. */
  OPERATOR_EMAILS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const emails = (v ?? '')
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean);
      const bad = emails.find((e) => !/^[^\s@<>,]+@[^\s@<>,]+$/.test(e));
      if (bad) {
        ctx.addIssue({ code: 'custom', message: `${bad.slice(0, 80)} is not an email address` });
        return z.NEVER;
      }
      return emails;
    }),
  /** Serves GET /metrics (Prometheus) on a port of its own; absent, there are no metrics. */
  METRICS_PORT: port.optional(),
  METRICS_HOST: z.string().min(1).optional(),
  /** When set, a scrape must send Authorization: Bearer <token>. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').max(1024).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(BODY_LIMIT_BYTES),
  ADDRESS_RATE_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(ADDRESS_BUDGET.limit),
  DEVICE_TOKEN_DAYS: z.coerce.number().int().min(0).max(3650).default(90),
  BOARD_RATE_SCALE: z.coerce.number().int().min(1).max(10_000).default(1),
  LEASE_MIN_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(30),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(120_000).default(10_000),
  COOKIE_SECURE: bool.optional(),
  /** Keys the password pre-hash and the CSRF token (at least 32 characters); required on MongoDB, where nodes must share it. */
  SECRET_KEY: z.string().min(32, 'must be at least 32 characters').max(1024).optional(),
  /** bcrypt's cost: 10..15 in production; tests go down to 4. */
  BCRYPT_ROUNDS: z.coerce
    .number()
    .int('must be an integer from 4 to 15')
    .min(4, 'must be an integer from 4 to 15')
    .max(15, 'must be an integer from 4 to 15')
    .default(12),
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  STRIPE_API_BASE: z.url().optional(),
  STRIPE_PRICE_MONTHLY: z.string().min(1).optional(),
  STRIPE_PRICE_YEARLY: z.string().min(1).optional(),
  /** How often billing records that could be stale are re-read from Stripe (also once at start); 0 turns the pass off. */
  BILLING_RECONCILE_INTERVAL_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .default(3600),
  /** Stripe calls one reconcile pass may make; the rest waits for the next pass. */
  BILLING_RECONCILE_MAX_CALLS: z.coerce.number().int().min(1).max(10_000).default(100),
  /** What the two Pro prices charge, in US dollars (the operators' revenue figures); unset, revenue is shown as unknown. */
  REVENUE_PRO_MONTHLY_USD: money.optional(),
  REVENUE_PRO_YEARLY_USD: money.optional(),
  /** Unit costs of running the service, in US dollars, for the operators' cost model (GET /api/admin/costmodel). */
  COST_STORED_GB_MONTH_USD: money.default(0.25),
  COST_MILLION_EVENTS_USD: money.default(1),
  COST_MILLION_REQUESTS_USD: money.default(0.4),
  COST_THOUSAND_SOCKET_HOURS_USD: money.default(0.5),
});

export type Env = z.infer<typeof EnvSchema>;

/** no-reply@ the public host name (localhost when the public URL names an address). */
function defaultSender(publicUrl: string): string {
  const host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '');
  return `Agent board <no-reply@${isIP(host) ? 'localhost' : host}>`;
}

/** ALLOWED_ORIGINS: each entry an http(s) origin, kept as its canonical origin string. */
function originList(value: string | undefined, ctx: z.RefinementCtx): string[] {
  const origins: string[] = [];
  for (const entry of (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    let url: URL | null = null;
    try {
      url = new URL(entry);
    } catch {
      url = null;
    }
    if (
      !url ||
      !/^https?:$/.test(url.protocol) ||
      (url.pathname !== '/' && url.pathname !== '') ||
      url.search ||
      url.hash
    ) {
      ctx.addIssue({ code: 'custom', message: `${entry.slice(0, 80)} is not an origin (scheme://host[:port])` });
      return z.NEVER;
    }
    origins.push(url.origin);
  }
  return origins;
}

export interface Config {
  port: number;
  host: string;
  store: { kind: 'embedded'; dataDir: string } | { kind: 'mongo'; uri: string; db: string };
  redisUrl: string | undefined;
  /** NODE_ID, or <hostname>-<pid>. */
  nodeId: string;
  /** NODE_URL as given (without it, the server names its own from the address and the port it listens on). */
  nodeUrl: string | undefined;
  /** PUBLIC_URL, or http://localhost:PORT without it. */
  publicUrl: string;
  /** Whether PUBLIC_URL was given: without it the loopback origins at the listening port are accepted. */
  publicUrlGiven: boolean;
  /** ALLOWED_ORIGINS: origins accepted beside the public one. */
  extraOrigins: string[];
  /** Peers whose forwarding header names the client; empty: the socket's peer is the client. */
  trustedProxies: ProxyList;
  forwardedHeader: 'x-forwarded-for' | 'forwarded';
  mail: { smtpUrl: string | undefined; from: string; takeoverMs: number };
  /** OPERATOR_EMAILS, canonical (trimmed, lower-case). */
  operatorEmails: string[];
  metrics: { port: number; host: string; token: string | undefined } | null;
  logLevel: Env['LOG_LEVEL'];
  bodyLimitBytes: number;
  shutdownGraceMs: number;
  /** The shortest lease a claim may ask for (the board's lower TTL bound). */
  leaseMinTtlSeconds: number;
  /** Signup, login, change-password and change-email per socket address per minute. */
  addressRatePerMinute: number;
  /** DEVICE_TOKEN_DAYS: how long a token the device flow issues works (null: until revoked). */
  deviceTokenDays: number | null;
  /** Multiplies every plan's per-principal request and write budgets. */
  boardRateScale: number;
  cookieSecure: boolean;
  /** The server secret as configured; without it the embedded store keeps one in DATA_DIR (src/secret.ts). */
  secretKey: string | undefined;
  bcryptRounds: number;
  stripe: {
    secretKey: string | undefined;
    webhookSecret: string | undefined;
    apiBase: string | undefined;
    priceMonthly: string | undefined;
    priceYearly: string | undefined;
  };
  /** The billing reconcile pass (src/billing/reconcile.ts): interval 0 is off. */
  billingReconcile: { intervalMs: number; maxCalls: number };
  /** Unit costs and Pro prices (US dollars) for the operators' cost model and revenue figures. */
  costs: {
    storedGbMonth: number;
    millionEvents: number;
    millionRequests: number;
    thousandSocketHours: number;
    proMonthly: number | null;
    proYearly: number | null;
  };
}

export class ConfigError extends Error {}

/** Parses the environment; throws ConfigError with one line naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    throw new ConfigError(`invalid configuration: ${name}: ${issue.message}`);
  }
  const e = parsed.data;
  if (e.STORE === 'mongo' && !e.MONGODB_URI) {
    throw new ConfigError('invalid configuration: MONGODB_URI: required when STORE=mongo');
  }
  if (e.STORE === 'mongo' && !e.SECRET_KEY) {
    throw new ConfigError('invalid configuration: SECRET_KEY: required when STORE=mongo (every node must share it)');
  }
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT !== 0 && e.METRICS_PORT === e.PORT) {
    throw new ConfigError(
      'invalid configuration: METRICS_PORT: must differ from PORT (metrics stay off the public port)',
    );
  }
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, '');
  return {
    port: e.PORT,
    host: e.HOST,
    store:
      e.STORE === 'mongo'
        ? { kind: 'mongo', uri: e.MONGODB_URI!, db: e.MONGODB_DB }
        : { kind: 'embedded', dataDir: e.DATA_DIR },
    redisUrl: e.REDIS_URL,
    nodeId:
      e.NODE_ID ??
      `${hostname()
        .replace(/[^\w.-]/g, '-')
        .slice(0, 48)}-${process.pid}`,
    nodeUrl: e.NODE_URL?.replace(/\/$/, ''),
    publicUrl,
    publicUrlGiven: e.PUBLIC_URL !== undefined,
    extraOrigins: e.ALLOWED_ORIGINS,
    trustedProxies: e.TRUSTED_PROXIES,
    forwardedHeader: e.FORWARDED_HEADER,
    operatorEmails: e.OPERATOR_EMAILS,
    mail: {
      smtpUrl: e.SMTP_URL,
      from: e.MAIL_FROM ?? defaultSender(publicUrl),
      takeoverMs: e.MAIL_TAKEOVER_SECONDS * 1000,
    },
    metrics:
      e.METRICS_PORT === undefined
        ? null
        : { port: e.METRICS_PORT, host: e.METRICS_HOST ?? e.HOST, token: e.METRICS_TOKEN },
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    leaseMinTtlSeconds: e.LEASE_MIN_TTL_SECONDS,
    addressRatePerMinute: e.ADDRESS_RATE_PER_MINUTE,
    deviceTokenDays: e.DEVICE_TOKEN_DAYS === 0 ? null : e.DEVICE_TOKEN_DAYS,
    boardRateScale: e.BOARD_RATE_SCALE,
    cookieSecure: e.COOKIE_SECURE ?? publicUrl.startsWith('https:'),
    secretKey: e.SECRET_KEY,
    bcryptRounds: e.BCRYPT_ROUNDS,
    stripe: {
      secretKey: e.STRIPE_SECRET_KEY,
      webhookSecret: e.STRIPE_WEBHOOK_SECRET,
      apiBase: e.STRIPE_API_BASE,
      priceMonthly: e.STRIPE_PRICE_MONTHLY,
      priceYearly: e.STRIPE_PRICE_YEARLY,
    },
    billingReconcile: {
      intervalMs: e.BILLING_RECONCILE_INTERVAL_SECONDS * 1000,
      maxCalls: e.BILLING_RECONCILE_MAX_CALLS,
    },
    costs: {
      storedGbMonth: e.COST_STORED_GB_MONTH_USD,
      millionEvents: e.COST_MILLION_EVENTS_USD,
      millionRequests: e.COST_MILLION_REQUESTS_USD,
      thousandSocketHours: e.COST_THOUSAND_SOCKET_HOURS_USD,
      proMonthly: e.REVENUE_PRO_MONTHLY_USD ?? null,
      proYearly: e.REVENUE_PRO_YEARLY_USD ?? null,
    },
  };
}
