// The DATA_DIR lock holds across network namespaces, as between two containers sharing one volume:
// each `npm start` runs under `unshare -n` (a network namespace of its own, as a container has),
// both on one directory. Exactly one serves; the other is refused naming the holder; after the
// holder is killed with SIGKILL the next one starts at once. (An abstract socket, the lock before,
// is per network namespace: both would have served.) Needs root for unshare, as CI has.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { entryArgs } from '../support/built.js';
import { tempDir } from '../support/temp.js';

const canUnshare = spawnSync('unshare', ['-n', 'true']).status === 0;
if (!canUnshare)
  console.warn(
    '\n!!! unshare -n is not permitted here (needs root): the network-namespace lock test FAILS rather than pass untested !!!\n',
  );

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** The port once it says it listens, or null once it exits without. */
  outcome: Promise<number | null>;
}

/** `npm start` in a network namespace of its own (loopback up, nothing else). */
function startIsolated(env: Record<string, string>): Run {
  const child = spawn(
    'unshare',
    ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, ...entryArgs('src/main.ts')],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        BCRYPT_ROUNDS: '4',
        SECRET_KEY: 'test-secret-key-of-at-least-32-characters',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const outcome = new Promise<number | null>((resolve) => {
    child.stdout!.on('data', () => {
      const m = /"port":(\d+).*"msg":"listening"/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    void exited.then(() => resolve(null));
  });
  return { child, output: () => out, exited, outcome };
}

/** GET /healthz from inside the process's own network namespace (nsenter), the only place it can be reached. */
function healthInside(pid: number, port: number): number | null {
  const probe = spawnSync(
    'nsenter',
    [
      '-t',
      String(pid),
      '-n',
      process.execPath,
      '-e',
      `fetch('http://127.0.0.1:${port}/healthz').then(r => console.log(r.status), () => console.log('down'))`,
    ],
    { encoding: 'utf8', timeout: 10_000 },
  );
  const status = Number(probe.stdout.trim());
  return Number.isInteger(status) && status > 0 ? status : null;
}

const runs: Run[] = [];
afterEach(async () => {
  for (const run of runs.splice(0)) {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
    await run.exited;
  }
});

describe('embedded store: the DATA_DIR lock across network namespaces', () => {
  it.runIf(canUnshare || process.env.CI)(
    'of two processes in different network namespaces on one DATA_DIR exactly one serves; after kill -9 of the holder another starts at once',
    async () => {
      const dir = await tempDir();
      try {
        const env = { DATA_DIR: dir.path };
        for (let round = 0; round < 2; round++) {
          const pair = [startIsolated(env), startIsolated(env)];
          runs.push(...pair);
          const ports = await Promise.all(pair.map((r) => r.outcome));
          const serving = ports.filter((p) => p !== null);
          expect(serving, `round ${round}:\n${pair.map((r) => r.output()).join('\n---\n')}`).toHaveLength(1);
          const holder = pair[ports.findIndex((p) => p !== null)]!;
          const refused = pair[ports.indexOf(null)]!;
          expect(await refused.exited).toBe(1);
          expect(refused.output()).toMatch(
            new RegExp(
              `^failed to start: DATA_DIR .* is in use by process ${holder.child.pid}; the embedded store serves one process at a time\\n$`,
            ),
          );
          expect(healthInside(holder.child.pid!, serving[0]!)).toBe(200);

          holder.child.kill('SIGKILL');
          await holder.exited;
          // At once: the very next start, in yet another namespace, takes the directory.
          const next = startIsolated(env);
          runs.push(next);
          const port = await next.outcome;
          expect(port, next.output()).not.toBeNull();
          expect(healthInside(next.child.pid!, port!)).toBe(200);
          next.child.kill('SIGKILL');
          await next.exited;
        }
      } finally {
        await dir.remove();
      }
    },
    180_000,
  );
});
