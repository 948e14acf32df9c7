// Starts src/main.ts as its own process on a free port, as `npm start` would, for the benches.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SOCKETS_PER_CREDENTIAL } from '../src/ws/socket-cap.js';
import { freePort } from './free-port.js';

export interface BenchNode {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Where a node's stdout (its log) goes: the terminal, nowhere, or a file in a temp dir of its own
 * ('file': real writes, as a log collector would take them; removed on stop, its size counted in
 * nodeLogBytes()).
 */
export type NodeOutput = 'inherit' | 'ignore' | 'file';

let logBytes = 0;
const running = new Set<ChildProcess>();

/** Our nodes do not outlive the bench, however it exits (a signal handler that calls process.exit included). */
function killOnExit(child: ChildProcess): void {
  if (running.size === 0) process.removeListener('exit', killAll).once('exit', killAll);
  running.add(child);
  child.once('exit', () => running.delete(child));
}
function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** Bytes of log that the nodes started with output 'file' wrote, over those stopped so far. */
export const nodeLogBytes = (): number => logBytes;

/**
 * A node on a throwaway embedded store unless `env` names another (STORE=mongo ...).
 * LOG_LEVEL is the server's default (info: a line per request) unless `env` sets it; the other
 * bench defaults below (cheap bcrypt, no address limit, 1 s leases allowed, a secret key) only
 * keep setup quick and rate limits out of the way of the load.
 * BENCH_NODE_ARGS adds node flags to it, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` for a profile.
 */
export async function startNode(
  env: Record<string, string> = {},
  nodeFlags: string[] = [],
  output: NodeOutput = 'inherit',
): Promise<BenchNode> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-node-'));
  const logDir = output === 'file' ? await mkdtemp(join(tmpdir(), 'bench-node-log-')) : null;
  const logFile = logDir ? join(logDir, 'stdout.log') : null;
  const logFd = logFile ? openSync(logFile, 'a') : null;
  const flags = [...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...nodeFlags];
  const cleanUp = async () => {
    if (logFile)
      logBytes += await stat(logFile).then(
        (s) => s.size,
        () => 0,
      );
    await rm(dataDir, { recursive: true, force: true });
    if (logDir) await rm(logDir, { recursive: true, force: true });
  };
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...flags, '--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        BCRYPT_ROUNDS: '4',
        ADDRESS_RATE_PER_MINUTE: '1000000',
        LEASE_MIN_TTL_SECONDS: '1',
        SECRET_KEY: 'bench-secret-key-of-at-least-32-characters',
        ...env,
      },
      stdio: ['ignore', logFd ?? (output === 'file' ? 'ignore' : output), 'inherit'],
    });
  } finally {
    if (logFd !== null) closeSync(logFd); // the child holds its own descriptor
  }
  killOnExit(child);
  try {
    return await served(child, `http://127.0.0.1:${port}`, '/readyz', 'server', cleanUp);
  } catch (e) {
    child.kill('SIGKILL');
    const tail = logFile
      ? await readFile(logFile, 'utf8').then(
          (t) => t.slice(-2000),
          () => '',
        )
      : '';
    await cleanUp();
    throw tail ? new Error(`${(e as Error).message}; its log ended:\n${tail}`) : e;
  }
}

/** A started server process, once `readyPath` answers; stop() ends it with SIGTERM, then runs `after`. */
export async function served(
  child: ChildProcess,
  url: string,
  readyPath: string,
  what: string,
  after: () => Promise<void> = async () => undefined,
): Promise<BenchNode> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await untilAnswers(`${url}${readyPath}`, child, what);
  return {
    url,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      await after();
    },
  };
}

/** Polls `url` until it answers 2xx; fails when `child` exits first or 30 s pass. */
export async function untilAnswers(url: string, child: ChildProcess, what: string): Promise<void> {
  for (
    let i = 0;
    !(await fetch(url).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  ) {
    if (i > 300 || child.exitCode !== null) throw new Error(`${what} did not become ready`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A signed-in owner: the session cookie, and the CSRF token its writes send back. */
export interface OwnerSession {
  cookie: string;
  csrfToken: string;
}

/** Headers for a write made with an owner's session. */
export const sessionWrite = (owner: OwnerSession): Record<string, string> => ({
  cookie: owner.cookie,
  'x-csrf-token': owner.csrfToken,
  'content-type': 'application/json',
});

/** Signs up a new account; its session. */
export async function signupOwner(url: string, email: string, password = 'bench password 123'): Promise<OwnerSession> {
  const res = await fetch(`${url}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('board_session='));
  const body = (await res.json()) as { csrfToken?: string };
  if (!cookie || !body.csrfToken) throw new Error(`signup answered ${res.status}: ${JSON.stringify(body)}`);
  return { cookie: cookie.split(';')[0]!, csrfToken: body.csrfToken };
}

export async function ownerAndAgent(
  url: string,
  email = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
): Promise<OwnerSession & { projectId: string; agent: Record<string, string>; principal: string }> {
  const owner = await signupOwner(url, email);
  const projectId = (
    (await fetch(`${url}/api/projects`, { headers: { cookie: owner.cookie } }).then((r) => r.json())) as {
      projects: { projectId: string }[];
    }
  ).projects[0]!.projectId;
  const token = await issueToken(url, owner, projectId, 'bench');
  return {
    ...owner,
    projectId,
    agent: { authorization: `Bearer ${token.secret}` },
    principal: `agent:${token.token.agentId}`,
  };
}

/**
 * Headers for `sockets` sockets on the board: a workspace token of its own for each
 * SOCKETS_PER_CREDENTIAL of them, since a node admits at most that many per credential.
 */
export async function socketCredentials(
  url: string,
  owner: OwnerSession,
  projectId: string,
  name: string,
  sockets: number,
): Promise<(i: number) => Record<string, string>> {
  const tokens = await Promise.all(
    Array.from({ length: Math.ceil(sockets / SOCKETS_PER_CREDENTIAL) }, (_, t) =>
      tokenFor(url, owner, projectId, `${name}-${t}`),
    ),
  );
  return (i) => tokens[Math.floor(i / SOCKETS_PER_CREDENTIAL)]!;
}

/** Another agent's workspace token on the board, as request headers. */
export async function tokenFor(
  url: string,
  owner: OwnerSession,
  projectId: string,
  name: string,
): Promise<Record<string, string>> {
  return { authorization: `Bearer ${(await issueToken(url, owner, projectId, name)).secret}` };
}

function issueToken(
  url: string,
  owner: OwnerSession,
  projectId: string,
  name: string,
): Promise<{ secret: string; token: { agentId: string } }> {
  return fetch(`${url}/api/accounts/tokens`, {
    method: 'POST',
    headers: sessionWrite(owner),
    body: JSON.stringify({ name, scope: 'workspace', projectId }),
  }).then((r) => r.json()) as Promise<{ secret: string; token: { agentId: string } }>;
}
