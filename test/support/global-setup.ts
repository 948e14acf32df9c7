// Finds the external components once per run and hands their addresses to the suites.
// A missing component is announced in one loud line; with REQUIRE_SERVICES=1 it fails the run.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { buildForChildren } from './built.js';

declare module 'vitest' {
  export interface ProvidedContext {
    mongoUri: string | null;
    redisUrl: string | null;
    stripeBase: string | null;
    /** Debian's Chromium for the browser tests, or null. */
    chromium: string | null;
    /** Where the workers note the error codes they are answered with (answered-codes.ts). */
    answeredCodesDir: string | null;
    /** This run's compiled sources, which child processes run (built.ts); null in a watch run. */
    builtDir: string | null;
  }
}

function reachable(host: string, port: number, ms = 700): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(ms, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

let stopMemoryServer: (() => Promise<unknown>) | null = null;

async function findMongo(): Promise<string | null> {
  if (process.env.MONGODB_URI) return process.env.MONGODB_URI;
  const child = spawn(process.execPath, [fileURLToPath(new URL('./mongo-memory.mjs', import.meta.url))], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (d: Buffer) => (errors += d.toString()));
  const uri = await new Promise<string | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), 30_000);
    child.stdout.once('data', (d: Buffer) => {
      clearTimeout(timer);
      resolve(d.toString().trim());
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(null);
    });
  });
  if (uri) {
    stopMemoryServer = () => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')));
    return uri;
  }
  child.kill('SIGKILL');
  return loudSkip(
    'MongoDB',
    `set MONGODB_URI (mongodb-memory-server could not obtain a mongod: ${errors.trim().split('\n')[0] || 'timed out'})`,
  );
}

async function findRedis(): Promise<string | null> {
  if (process.env.REDIS_URL) return process.env.REDIS_URL;
  if (await reachable('127.0.0.1', 6379)) return 'redis://127.0.0.1:6379';
  return loudSkip('Redis', 'set REDIS_URL or run redis-server on 127.0.0.1:6379');
}

async function findStripe(): Promise<string | null> {
  if (process.env.STRIPE_API_BASE) return process.env.STRIPE_API_BASE;
  if (await reachable('127.0.0.1', 12111)) return 'http://127.0.0.1:12111';
  return loudSkip('stripe-mock', 'set STRIPE_API_BASE or run stripe-mock on 127.0.0.1:12111');
}

const CHROMIUM = '/usr/bin/chromium';
function findChromium(): string | null {
  if (existsSync(process.env.CHROMIUM_PATH ?? CHROMIUM)) return process.env.CHROMIUM_PATH ?? CHROMIUM;
  return loudSkip('Chromium', 'apt-get install chromium (Debian), or set CHROMIUM_PATH');
}

const missing: string[] = [];
function loudSkip(name: string, how: string): null {
  missing.push(name);
  console.warn(`\n!!! ${name} NOT AVAILABLE: its suites are SKIPPED (${how}) !!!\n`);
  return null;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The servers the suites start serve the browser board from dist/web: build it if it is missing or stale.
  const { buildWeb } = (await import(fileURLToPath(new URL('../../scripts/build-web.mjs', import.meta.url)))) as {
    buildWeb: (o: { quiet: boolean }) => Promise<unknown>;
  };
  await buildWeb({ quiet: true });
  const [mongoUri, redisUrl, stripeBase, built] = await Promise.all([
    findMongo(),
    findRedis(),
    findStripe(),
    project.vitest.config.watch
      ? null
      : buildForChildren().catch((e: unknown) => {
          console.warn(
            `\n!!! the sources did not compile for child processes; they run through tsx (${String(e)}) !!!\n`,
          );
          return null;
        }),
  ]);
  const chromium = findChromium();
  if (process.env.REQUIRE_SERVICES === '1' && missing.length) {
    throw new Error(`REQUIRE_SERVICES=1 but these components are missing: ${missing.join(', ')}`);
  }
  project.provide('mongoUri', mongoUri);
  project.provide('redisUrl', redisUrl);
  project.provide('stripeBase', stripeBase);
  project.provide('chromium', chromium);
  const codesDir = await mkdtemp(join(tmpdir(), 'board-codes-'));
  project.provide('answeredCodesDir', codesDir);
  project.provide('builtDir', built?.dir ?? null);
  return async () => {
    await stopMemoryServer?.();
    await built?.remove();
    try {
      await checkAnsweredCodes(project, codesDir);
    } finally {
      await rm(codesDir, { recursive: true, force: true });
    }
  };
}

/**
 * Codes no suite's own client is answered with, and where they are answered instead. Every other
 * registered code must reach a test's Client or socket in a whole run.
 */
const ANSWERED_ELSEWHERE: Record<string, string> = {};

/**
 * After a whole run (every test file, no name filter, every component present, nothing failed),
 * or with CHECK_ANSWERED_CODES=1: each registered code was answered to a suite at least once, or
 * the run fails naming those not.
 */
async function checkAnsweredCodes(project: TestProject, dir: string): Promise<void> {
  const ran = project.vitest.state.getFiles();
  const all = (await project.globTestFiles()).testFiles;
  const whole =
    missing.length === 0 &&
    !project.vitest.config.testNamePattern &&
    ran.length === all.length &&
    ran.every((f) => f.result?.state === 'pass');
  if (!whole && process.env.CHECK_ANSWERED_CODES !== '1') return;
  const answered = new Set(
    (await Promise.all((await readdir(dir)).map((f) => readFile(join(dir, f), 'utf8'))))
      .flatMap((t) => t.split('\n'))
      .filter(Boolean),
  );
  const { ERROR_CODES } = await import('../../src/errors/registry.js');
  const never = ERROR_CODES.filter((code) => !answered.has(code) && !(code in ANSWERED_ELSEWHERE));
  console.log(
    `\nerror codes answered to the suites: ${answered.size} of ${ERROR_CODES.length}${never.length ? `; never: ${never.join(', ')}` : ''}`,
  );
  if (never.length) process.exitCode = 1; // a teardown's error is only printed; this fails the run
  if (never.length)
    throw new Error(
      `These registered codes were never answered to a test in this whole run: ${never.join(', ')}. Reach each in an e2e test, or name where it is answered in ANSWERED_ELSEWHERE (test/support/global-setup.ts).`,
    );
}
