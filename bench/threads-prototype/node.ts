// The prototype node (issue 46, step 3): board actors on the main thread, the request front for
// claim and submit on FRONT_THREADS worker threads (one uWS app each on FRONT_PORT, shared through
// SO_REUSEPORT), or with FRONT_THREADS=0 the same front on the main thread (the control: what the
// reduced front costs without threads).
//   PORT=... FRONT_PORT=... FRONT_THREADS=2 DATA_DIR=... node --import tsx bench/threads-prototype/node.ts
// The main thread also runs the real server (src/server.ts, as src/main.ts composes it) on PORT,
// for the bench's setup (sign-up, tokens, items) and /readyz. The commands that come from the
// fronts are decided by a board registry of the prototype's own (src/server/boards.ts's
// startBoards: the real registry, actors, router, machines and embedded store, on the same store
// object), so the measured path runs the real actor and commit; the server's own actor for the
// board, which created the items, stays idle (two registries on one store are safe: every commit
// is version-checked).
import { writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { deriveKeys } from '../../src/auth/keys.js';
import { tokenIdentity } from '../../src/auth/authenticator.js';
import { bcryptHasher } from '../../src/auth/passwords.js';
import { toAppError } from '../../src/board/board-access.js';
import { billingSetupFrom } from '../../src/billing/setup.js';
import { MemoryBus } from '../../src/bus/bus.js';
import { loadConfig } from '../../src/config.js';
import { AppError } from '../../src/errors/app-error.js';
import { createLogger } from '../../src/log.js';
import { mailerFrom } from '../../src/mail/from-config.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { serverSecret } from '../../src/server-secret.js';
import { startServer } from '../../src/server.js';
import { startBoards } from '../../src/server/boards.js';
import type { Notice } from '../../src/server/notices.js';
import type { BoardCommand } from '../../src/board/commands.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { startFront, startProfile, type Answer, type Ask } from './front.js';

const profile = process.env.PROF_DIR ? await startProfile() : null;
const config = loadConfig();
const logger = createLogger(config.logLevel);
const keys = deriveKeys(await serverSecret(config));
const store = await openEmbeddedStore(config.store.kind === 'embedded' ? config.store.dataDir : './data');
const bus = new MemoryBus<Notice>();
const server = await startServer({
  config,
  store,
  bus,
  limiter: new MemoryRateLimiter(),
  passwords: bcryptHasher(config.bcryptRounds, keys.pepper),
  keys,
  billing: billingSetupFrom(config),
  mailer: mailerFrom(config, { store, keys }, logger),
  logger,
});
const boards = startBoards({
  config,
  store,
  clock: Date.now,
  logger,
  bus,
  keys,
  homes: undefined,
  committed: () => undefined,
  warned: () => undefined,
});

const refused = (id: number, e: unknown): Answer => {
  const a = toAppError(e);
  return a instanceof AppError
    ? { id, ok: false, status: a.status, code: a.code, message: a.message }
    : { id, ok: false, status: 500, code: 'INTERNAL', message: String((a as Error)?.message ?? a) };
};
/** The actors' side of the protocol: an identity resolved from the store, or a command decided by its board. */
async function handle(ask: Ask): Promise<Answer> {
  try {
    if (ask.op === 'auth') {
      const token = await store.tokens.findOne({ secretHash: ask.secretHash });
      if (!token || token.revoked || !token.boardId)
        return { id: ask.id, ok: false, status: 401, code: 'AUTH_REQUIRED', message: 'Unknown token.' };
      return {
        id: ask.id,
        ok: true,
        value: { identity: tokenIdentity(token), boardId: token.boardId, role: token.role ?? 'member' },
      };
    }
    return { id: ask.id, ok: true, value: await boards.router.ask(ask.boardId, ask.command as BoardCommand) };
  } catch (e) {
    return refused(ask.id, e);
  }
}

const frontPort = Number(process.env.FRONT_PORT);
const threads = Number(process.env.FRONT_THREADS ?? 2);
const frontData = { port: frontPort, minTtl: config.leaseMinTtlSeconds, rateScale: config.boardRateScale };
const workers: Worker[] = [];
const tids: number[] = [];
let inline: Awaited<ReturnType<typeof startFront>> | null = null;
if (threads === 0) {
  inline = await startFront({ ...frontData, send: (a) => void handle(a).then((r) => inline!.answered(r)) });
} else {
  for (let i = 0; i < threads; i++) {
    const w = new Worker(new URL('./front-worker.mjs', import.meta.url), {
      workerData: { ...frontData, front: true },
    });
    await new Promise<void>((resolve, reject) => {
      w.once('error', reject);
      w.on('message', function first(m: { ready?: number }) {
        if (m.ready === undefined) return;
        w.off('message', first);
        tids.push(m.ready);
        resolve();
      });
    });
    w.on('message', (m: Ask) => void handle(m).then((r) => w.postMessage(r)));
    workers.push(w);
  }
}
if (process.env.TIDS_FILE) writeFileSync(process.env.TIDS_FILE, JSON.stringify(tids));
logger.info({ port: server.port, frontPort, threads, tids }, 'prototype listening');

// uWS apps on worker threads cannot be torn down from outside (terminate() or exit with their
// sockets open aborts on uv_loop_close), so the node ends itself with SIGKILL once the store is closed.
process.once('SIGTERM', () => {
  inline?.close();
  const closed = workers.map(
    (w) =>
      new Promise<void>((resolve) => {
        w.on('message', (m) => m === 'closed' && resolve());
        setTimeout(resolve, 5000);
        w.postMessage('close');
      }),
  );
  void Promise.all(closed)
    .then(() => profile?.(`${process.env.PROF_DIR}/main-${process.pid}.cpuprofile`))
    .then(() => boards.close())
    .then(() => server.shutdown())
    .finally(() => process.kill(process.pid, 'SIGKILL'));
});
