// Schemathesis against the served OpenAPI document: every operation, once with a service token and
// once with a cookie session. Any 5xx, or any answer whose status or body the document does not
// describe, fails the test with Schemathesis's report. scripts/schemathesis.sh installs the tool.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/auth/authenticator.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tempDir, unique } from '../support/temp.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/schemathesis.sh', import.meta.url));
/**
 * Where the script keeps its venv: per machine and version, outside the checkout. Its default,
 * under node_modules, is gone after every `npm ci`, which CI runs on a fresh clone, and making it
 * again (pip, about 25 s) was spent inside this test on every run.
 */
const SCHEMATHESIS_HOME =
  process.env.SCHEMATHESIS_HOME ??
  join(
    process.env.XDG_CACHE_HOME || join(homedir(), '.cache'),
    'agent-board',
    `schemathesis-${/^VERSION=(\S+)$/m.exec(readFileSync(SCRIPT, 'utf8'))![1]}`,
  );
const PUBLIC_URL = 'http://board.test';
const ORIGIN = new URL(PUBLIC_URL).origin;
/** Per operation and phase; small enough for a few minutes on two busy cores. */
const MAX_EXAMPLES = process.env.SCHEMATHESIS_MAX_EXAMPLES ?? '20';
const CHECKS = ['not_a_server_error', 'status_code_conformance', 'response_schema_conformance'];
/**
 * Methods the coverage phase sends where an operation has none. Schemathesis's default adds QUERY,
 * for which uWebSockets.js closes the connection without an answer: a transport matter outside
 * the document, and outside the checks above.
 */
const CONFIG = `[phases.coverage]\nunexpected-methods = ["GET", "PUT", "POST", "DELETE", "OPTIONS", "PATCH", "TRACE"]\n`;

const stripeBase = inject('stripeBase');
const BILLING = {
  STRIPE_SECRET_KEY: 'sk_test_123',
  STRIPE_WEBHOOK_SECRET: 'whsec_schemathesis',
  STRIPE_PRICE_MONTHLY: 'price_pro_monthly',
  STRIPE_PRICE_YEARLY: 'price_pro_yearly',
  STRIPE_API_BASE: stripeBase ?? '',
};
/** Without stripe-mock, the operations that answer 503 BILLING_UNAVAILABLE by design are left out (CI always has it). */
const withoutProvider = stripeBase
  ? []
  : ['--exclude-path-regex', '^/api/(account/billing/(checkout|portal|annual)|billing/webhook)$'];

let srv: TestServer;
let work: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  // Budgets raised so the run explores the operations rather than their 429s.
  // Billing against stripe-mock, so its operations answer as deployed (without a provider they are 503 by design).
  srv = await startTestServer({
    PUBLIC_URL,
    ADDRESS_RATE_PER_MINUTE: '1000000',
    BOARD_RATE_SCALE: '10000',
    ...(stripeBase ? BILLING : {}),
  });
  work = await tempDir();
  await writeFile(join(work.path, 'schemathesis.toml'), CONFIG);
});
afterAll(async () => {
  await srv?.stop();
  await work?.remove();
});

interface Session {
  cookie: string;
  /** Sent as X-CSRF-Token on cookie writes, when the server hands one out. */
  csrfToken: string | undefined;
}

// A response body of any shape: the run explores every operation.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyBody = any;
async function call(
  path: string,
  init: { method?: string; json?: unknown; headers?: Record<string, string> },
): Promise<{ status: number; body: AnyBody; headers: Headers }> {
  const headers: Record<string, string> = { origin: ORIGIN, ...init.headers };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${srv.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await res.text();
  const body: unknown = text ? JSON.parse(text) : undefined;
  if (res.status >= 400) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${text}`);
  return { status: res.status, body, headers: res.headers };
}

/** An account with a session, a second project, a workspace token for it and one item on it. */
async function fixture(): Promise<{ session: Session; bearer: string }> {
  const signup = await call('/api/auth/signup', {
    method: 'POST',
    json: { email: `${unique('st')}@example.com`, password: 'schemathesis password 1' },
  });
  const set = signup.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (!set) throw new Error('signup set no session cookie');
  let csrfToken = signup.body.csrfToken as string | undefined;
  const cookieHeaders = () => ({ cookie: set, ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}) });
  csrfToken ??= (await call('/api/auth/me', { headers: cookieHeaders() })).body.csrfToken as string | undefined;
  const project = await call('/api/projects', {
    method: 'POST',
    json: { name: unique('schemathesis') },
    headers: cookieHeaders(),
  });
  const projectId = project.body.projectId as string;
  const issued = await call('/api/accounts/tokens', {
    method: 'POST',
    json: { name: 'schemathesis', scope: 'workspace', projectId },
    headers: cookieHeaders(),
  });
  const bearer = issued.body.secret as string;
  await call('/api/items', {
    method: 'POST',
    json: { title: 'seed item' },
    headers: { authorization: `Bearer ${bearer}` },
  });
  return { session: { cookie: set, csrfToken }, bearer };
}

/** Runs Schemathesis with `headers` on every request; resolves with its exit code and report. */
function schemathesis(
  headers: string[],
  extra: string[] = [],
): Promise<{ code: number | null; output: string; seconds: number }> {
  const args = [
    '--config-file',
    join(work.path, 'schemathesis.toml'),
    'run',
    `${srv.url}/docs/openapi.json`,
    '--url',
    srv.url,
    ...headers.flatMap((h) => ['-H', h]),
    '--checks',
    CHECKS.join(','),
    '--phases',
    'examples,coverage,fuzzing',
    '--max-examples',
    MAX_EXAMPLES,
    '--seed',
    process.env.SCHEMATHESIS_SEED ?? '20261122',
    // One worker: Hypothesis describes strategies with ast.parse, which CPython 3.11 does not make
    // thread-safe ("AST constructor recursion depth mismatch" under two workers).
    '--workers',
    '1',
    '--request-timeout',
    '20',
    '--generation-with-security-parameters',
    'false',
    '--generation-database',
    'none',
    '--no-color',
    ...extra,
  ];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    // Asynchronous: the server under test runs in this process and must keep answering.
    const child = spawn(SCRIPT, args, {
      cwd: work.path,
      env: { ...process.env, SCHEMATHESIS_HOME, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output, seconds: Math.round((performance.now() - started) / 1000) }));
  });
}

describe('the OpenAPI document under Schemathesis', () => {
  it(
    'describes every answer of every operation, with a service token and with a cookie session',
    async () => {
      // The two runs at once (each Schemathesis has one worker), each on an account of its own so
      // that neither acts on what the other is using.
      const [{ bearer }, { session }] = await Promise.all([fixture(), fixture()]);
      const [bearerRun, cookieRun] = await Promise.all([
        // Logout is run here, without a session: in the cookie run it would end the session under test.
        schemathesis([`Authorization: Bearer ${bearer}`], withoutProvider),
        schemathesis(
          [
            `Cookie: ${session.cookie}`,
            `Origin: ${ORIGIN}`,
            ...(session.csrfToken ? [`X-CSRF-Token: ${session.csrfToken}`] : []),
          ],
          ['--exclude-path', '/api/auth/logout', ...withoutProvider],
        ),
      ]);
      const runs = [
        { name: 'bearer', result: bearerRun },
        { name: 'cookie', result: cookieRun },
      ];
      const failed = runs.filter((r) => r.result.code !== 0);
      const report = failed
        .map(
          ({ name, result }) =>
            `── Schemathesis with the ${name} (exit ${result.code}, ${result.seconds} s) ──\n${result.output}`,
        )
        .join('\n');
      expect(
        failed.map((r) => r.name),
        report,
      ).toEqual([]);
    },
    20 * 60_000,
  );
});
