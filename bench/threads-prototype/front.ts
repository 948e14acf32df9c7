// The prototype's request front (issue 46, step 3): one uWebSockets.js app serving POST /api/claim
// and POST /api/submit, run on a worker thread (one app per thread, the port shared through
// SO_REUSEPORT) or, as the control, on the main thread beside the board actors. It does what the
// real pipeline does for these two routes, with the real modules where they run without the rest
// of the server: abort guard, body read with a cap, content type, JSON parse, the real zod input
// schemas (src/board/schemas.ts, src/routes/schemas.ts), authentication (sha256 of the Bearer
// secret, an identity cache per thread, a miss resolved by the store's thread), the role check,
// the real rate stage (src/ratelimit/budgets.ts on a MemoryRateLimiter of this thread's own) with
// its nine headers, the real request log line (src/log.ts requestLogger, pino's destination on
// fd 1), and one corked answer. The decided command goes to the board actors' thread as a message;
// the answer is written when the commit's reply comes back.
// What it leaves out of the real pipeline: CORS/origin checks, cookie sessions and CSRF, project
// selection by header (a workspace token names its board), the usage and abuse counters, the
// metrics and the watch, the error-resolution observer, the drain count, and every other route.
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { parentPort, workerData, isMainThread, threadId } from 'node:worker_threads';
import { Session } from 'node:inspector';
import uWS from 'uWebSockets.js';
import { z } from 'zod';
import { sha256 } from '../../src/auth/authenticator.js';
import { CommitId, WorkId } from '../../src/board/schemas.js';
import { createLogger, requestLogger } from '../../src/log.js';
import { drawRateBudget, type RateOutcome } from '../../src/ratelimit/budgets.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { ForbiddenHead } from '../../src/routes/schemas.js';
import type { Identity } from '../../src/auth/identity.js';

const TTL_DEFAULT_S = 900;
const TTL_MAX_S = 86_400;
const BODY_LIMIT = 1 << 20;

/** What the front sends the actors' thread, and what comes back. */
export type AskBody = { op: 'auth'; secretHash: string } | { op: 'command'; boardId: string; command: unknown };
export type Ask = AskBody & { id: number };
export type Answer =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; status: number; code: string; message: string };
/** An identity as the actors' thread resolved it, with the board its workspace token names. */
export interface Resolved {
  identity: Identity & { principal: string };
  boardId: string;
  role: string;
}

export interface FrontOptions {
  port: number;
  minTtl: number;
  rateScale: number;
  /** Sends an ask to the actors' thread; the answer comes back through `answered`. */
  send(ask: Ask): void;
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

/**
 * Starts V8's sampling profiler on this thread (node --cpu-prof writes a worker's profile only when
 * it exits, and these threads are never let exit: see node.ts); the function returned writes it.
 */
export async function startProfile(): Promise<(file: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 1000 });
  await post('Profiler.start');
  return async (file) => {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

class Refusal {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly message: string,
    readonly headers: Record<string, string> = {},
  ) {}
}

/** Starts the front; resolves with `answered`, which the caller feeds the actors' replies. */
export async function startFront(o: FrontOptions): Promise<{ answered(a: Answer): void; close(): void }> {
  const claimInput = z.strictObject({
    workId: WorkId.optional(),
    purpose: z.enum(['work', 'verify']).default('work'),
    ttlSeconds: z.number().int().min(o.minTtl).max(TTL_MAX_S).default(TTL_DEFAULT_S),
    head: ForbiddenHead,
  });
  const submitInput = z.strictObject({ leaseId: z.string().min(1).max(100), head: CommitId });
  const limiter = new MemoryRateLimiter();
  const log = requestLogger(createLogger('info'));
  const identities = new Map<string, Resolved>();
  const waiting = new Map<number, (a: Answer) => void>();
  let nextId = 1;
  const ask = (a: AskBody): Promise<Answer> =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      o.send({ ...a, id });
    });
  const app = uWS.App();

  async function authenticate(authorization: string): Promise<Resolved> {
    if (!authorization.startsWith('Bearer ')) throw new Refusal(401, 'AUTH_REQUIRED', 'Sign in or send a token.');
    const secretHash = sha256(authorization.slice(7));
    const kept = identities.get(secretHash);
    if (kept) return kept;
    const a = await ask({ op: 'auth', secretHash });
    if (!a.ok) throw new Refusal(a.status, a.code, a.message);
    const resolved = a.value as Resolved;
    identities.set(secretHash, resolved);
    return resolved;
  }

  function route(
    path: string,
    schema: z.ZodType,
    command: (body: any, who: Resolved) => unknown, // eslint-disable-line @typescript-eslint/no-explicit-any
  ): void {
    app.post(path, (res, req) => {
      const started = performance.now();
      let aborted = false;
      res.onAborted(() => (aborted = true));
      const authorization = req.getHeader('authorization');
      const contentType = req.getHeader('content-type');
      const chunks: Buffer[] = [];
      let size = 0;
      const answer = (status: number, body: unknown, headers: Record<string, string>) => {
        if (aborted) return;
        const text = JSON.stringify(body);
        res.cork(() => {
          res.writeStatus(STATUS_TEXT[status] ?? `${status} Error`);
          res.writeHeader('content-type', 'application/json; charset=utf-8');
          for (const k in headers) res.writeHeader(k, headers[k]!);
          res.end(text);
        });
        log({ reqId: randomUUID(), route: path, status, durationMs: Math.round(performance.now() - started) });
      };
      const fail = (e: unknown, headers: Record<string, string> = {}) => {
        const r = e instanceof Refusal ? e : new Refusal(500, 'INTERNAL', String((e as Error)?.message ?? e));
        answer(r.status, { error: { code: r.code, message: r.message } }, { ...headers, ...r.headers });
      };
      res.onData((chunk, isLast) => {
        size += chunk.byteLength;
        if (size > BODY_LIMIT) return fail(new Refusal(413, 'PAYLOAD_TOO_LARGE', 'Body too large.'));
        chunks.push(Buffer.from(chunk.slice(0)));
        if (!isLast) return;
        void (async () => {
          let rate: RateOutcome = { headers: {} };
          try {
            if (!contentType.startsWith('application/json'))
              throw new Refusal(415, 'JSON_REQUIRED', 'Send application/json.');
            let json: unknown;
            try {
              json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              throw new Refusal(400, 'INVALID_JSON', 'The body is not JSON.');
            }
            const parsed = schema.safeParse(json);
            if (!parsed.success) throw new Refusal(400, 'INVALID_INPUT', parsed.error.issues[0]?.message ?? '');
            const who = await authenticate(authorization);
            if (who.role !== 'member' && who.role !== 'admin' && who.role !== 'owner')
              throw new Refusal(403, 'ROLE_REQUIRED', 'member');
            const drawn = drawRateBudget(limiter, {
              rate: 'lifecycle',
              identity: who.identity,
              remoteAddress: '127.0.0.1',
              plan: 'free',
              addressLimit: 1_000_000,
              scale: o.rateScale,
              now: Date.now(),
            });
            rate = drawn instanceof Promise ? await drawn : drawn;
            if (rate.denied) throw new Refusal(429, 'RATE_LIMITED', 'Over budget.', rate.denied.headers);
            const a = await ask({ op: 'command', boardId: who.boardId, command: command(parsed.data, who) });
            if (!a.ok) throw new Refusal(a.status, a.code, a.message);
            answer(200, a.value, rate.headers);
          } catch (e) {
            fail(e, rate.headers);
          }
        })();
      });
    });
  }

  route('/api/claim', claimInput, (body: z.infer<typeof claimInput>, who) => ({
    kind: 'claim',
    input: {
      principal: who.identity.principal,
      workId: body.workId ?? null,
      purpose: body.purpose,
      ttlMs: body.ttlSeconds * 1000,
      leaseId: `lease_${randomUUID()}`,
      within: null,
    },
  }));
  route('/api/submit', submitInput, (body: z.infer<typeof submitInput>, who) => ({
    kind: 'submit',
    input: { principal: who.identity.principal, leaseId: body.leaseId, head: body.head, within: null },
  }));
  app.get('/healthz', (res) => void res.cork(() => res.end('{"ok":true}')));

  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
    // No LIBUS_LISTEN_EXCLUSIVE_PORT: uSockets sets SO_REUSEPORT, so every thread's app listens on the one port.
    app.listen('127.0.0.1', o.port, (s) => (s ? resolve(s) : reject(new Error(`cannot listen on ${o.port}`)))),
  );
  return {
    answered(a) {
      const w = waiting.get(a.id);
      waiting.delete(a.id);
      w?.(a);
    },
    close() {
      uWS.us_listen_socket_close(listenSocket);
    },
  };
}

// On a worker thread: the front, talking to the actors' thread over parentPort.
if (!isMainThread && parentPort && (workerData as { front?: boolean } | null)?.front) {
  const port = parentPort;
  const data = workerData as { port: number; minTtl: number; rateScale: number };
  const profile = process.env.PROF_DIR ? await startProfile() : null;
  const front = await startFront({ ...data, send: (a) => port.postMessage(a) });
  port.on('message', (m: Answer | 'close') => {
    if (m === 'close') {
      front.close();
      void (profile?.(`${process.env.PROF_DIR}/front-${threadId}.cpuprofile`) ?? Promise.resolve()).then(() =>
        port.postMessage('closed'),
      );
      return;
    }
    front.answered(m);
  });
  // The thread's Linux id, so the bench can tell this thread's CPU from the pool's (all are named "node").
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  port.postMessage({ ready: Number(stat.slice(0, stat.indexOf(' '))) });
}
