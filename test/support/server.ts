// Starts a real node on an ephemeral port over a throwaway embedded store (or a given store),
// and a small HTTP client that keeps cookies like a browser would.
import { pino } from 'pino';
import { onTestFinished } from 'vitest';
import { bcryptHasher } from '../../src/auth/passwords.js';
import { deriveKeys } from '../../src/auth/keys.js';
import { billingSetupFrom } from '../../src/billing/setup.js';
import { loadConfig, type Config } from '../../src/config.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { windowStart } from '../../src/ratelimit/limiter.js';
import { BOARD_WINDOW_MS } from '../../src/plans.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import type { Store } from '../../store/ports/store.js';
import type { MailMessage, Mailer } from '../../src/mail/mailer.js';
import type { Bus } from '../../src/bus/bus.js';
import type { Notice } from '../../src/server/notices.js';
import type { Homes } from '../../src/cluster/homes.js';
import { answered, codeOf } from './answered-codes.js';
import { tempDir, unique } from './temp.js';

export interface TestServer {
  url: string;
  store: Store;
  server: RunningServer;
  mail: CaptureMailer;
  /** Moves the server's clock forward. */
  advance(ms: number): void;
  /** The server's clock, advances included. */
  now(): number;
  /**
   * Until the running test ends, the rate budgets count at a clock of their own, held at the start
   * of a fresh window (of `windowMs`, a minute unless said): it moves only when the test advances
   * the server's clock (a window's length to the next one), never with the wall clock. So a test
   * that spends a budget starts with all of it and never straddles two windows, however slow the
   * machine.
   */
  holdBudgets(windowMs?: number): void;
  stop(): Promise<void>;
}

/** How long the rate budgets' windows are (board, address and operator budgets alike). */
export const BUDGET_WINDOW_MS = BOARD_WINDOW_MS;

/** The test mail transport: keeps every message, and waits for the next one to an address. */
export class CaptureMailer implements Mailer {
  readonly sent: MailMessage[] = [];
  private waiters: { to: string; resolve: (m: MailMessage) => void }[] = [];

  async send(message: MailMessage): Promise<void> {
    this.sent.push(message);
    for (const w of this.waiters.filter((w) => w.to === message.to)) w.resolve(message);
    this.waiters = this.waiters.filter((w) => w.to !== message.to);
  }

  /** The latest message to `to` matching `subject`, waiting up to 5 s for it. */
  async next(to: string, subject: RegExp): Promise<MailMessage> {
    const found = [...this.sent].reverse().find((m) => m.to === to && subject.test(m.subject));
    if (found) return found;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no mail to ${to}`)), 5000);
      this.waiters.push({ to, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  }

  /** The link token in a message. */
  static tokenOf(message: MailMessage): string {
    return /#token=([\w-]+)/.exec(message.text)![1]!;
  }
}

export const TEST_SECRET = 'test-secret-key-of-at-least-32-characters';
const keys = deriveKeys(TEST_SECRET);
/** The in-process servers' log: silent, or TEST_LOG_LEVEL (say `error`) to read what a failing test's server said, on stdout. */
const TEST_LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'silent';
const passwords = bcryptHasher(4, keys.pepper);

export async function startTestServer(
  env: Record<string, string> = {},
  store?: Store,
  bus?: Bus<Notice>,
  homes?: Homes,
): Promise<TestServer> {
  const dir = store ? null : await tempDir();
  const config: Config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dir?.path ?? '/nonexistent',
    PUBLIC_URL: 'http://board.test',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const theStore = store ?? (await openEmbeddedStore(dir!.path));
  const mail = new CaptureMailer();
  let offset = 0;
  const clock = () => Date.now() + offset;
  /** The time the budgets count at while a test holds them (holdBudgets), else null: the server's clock. */
  let budgetTime: number | null = null;
  /** The start of the first window no hold has counted in yet. */
  let heldUntil = 0;
  const server = await startServer({
    config,
    store: theStore,
    bus,
    ...(homes && { homes }),
    limiter: new MemoryRateLimiter(() => budgetTime ?? clock()),
    passwords,
    keys,
    billing: billingSetupFrom(config),
    mailer: mail,
    logger: pino({ level: TEST_LOG_LEVEL }),
    clock,
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    // Writes through it to what identities are read from are told to the identity caches, as the
    // node's own are; its boards are the store's own, so a test may patch them under the node.
    store: Object.assign(Object.create(Object.getPrototypeOf(server.store) as object) as Store, server.store, {
      boards: theStore.boards,
    }),
    server,
    mail,
    advance(ms) {
      offset += ms;
      if (budgetTime !== null) budgetTime += ms;
    },
    now: clock,
    holdBudgets(windowMs = BUDGET_WINDOW_MS) {
      // A window no earlier hold on this server counted in: two tests in one minute would
      // otherwise share the next window's counts, and the second start with part of them spent.
      budgetTime = Math.max(windowStart(clock(), windowMs) + windowMs, heldUntil);
      onTestFinished(() => {
        heldUntil = Math.max(heldUntil, windowStart(budgetTime ?? clock(), windowMs) + windowMs);
        budgetTime = null;
      });
    },
    async stop() {
      await server.shutdown();
      await dir?.remove();
    },
  };
}

export interface Res {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

/**
 * A client with a cookie jar, like a browser page: it keeps the csrfToken a session response
 * hands out and sends it back in X-CSRF-Token on writes that carry the cookie. `json` sets the
 * content type, `raw` sends bytes as given.
 */
export class Client {
  cookies = new Map<string, string>();
  csrfToken: string | null = null;
  constructor(
    readonly base: string,
    readonly defaults: Record<string, string> = {},
  ) {}

  async request(
    method: string,
    path: string,
    opts: { json?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {},
  ): Promise<Res> {
    const headers: Record<string, string> = { ...this.defaults, ...opts.headers };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (this.cookies.size && this.csrfToken && method !== 'GET' && method !== 'HEAD')
      headers['x-csrf-token'] ??= this.csrfToken;
    let body: string | Buffer | undefined = opts.raw;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${this.base}${path}`, { method, headers, body });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const [name, value] = pair!.split('=');
      if (attrs.some((a) => a.trim() === 'Max-Age=0')) this.cookies.delete(name!.trim());
      else this.cookies.set(name!.trim(), value!.trim());
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const token = (parsed as { csrfToken?: unknown } | undefined)?.csrfToken;
    if (typeof token === 'string') this.csrfToken = token;
    if (res.status >= 400) answered(codeOf(parsed));
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  get = (path: string, headers?: Record<string, string>) => this.request('GET', path, { headers });
  post = (path: string, json?: unknown, headers?: Record<string, string>) =>
    this.request('POST', path, { json, headers });
}

export async function signedUp(
  base: string,
): Promise<{ client: Client; email: string; password: string; accountId: string }> {
  const client = new Client(base);
  const email = `${unique('user')}@example.com`;
  const password = 'correct horse battery staple';
  const res = await client.post('/api/auth/signup', { email, password });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
  return { client, email, password, accountId: res.body.account.id };
}
