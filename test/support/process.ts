// Runs the real entry point (src/main.ts) as a child process, as `npm start` would.
import { spawn, type ChildProcess } from 'node:child_process';
import { entryArgs } from './built.js';

export interface NodeProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

export function runMain(env: Record<string, string>): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, entryArgs('src/main.ts'), {
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
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/** Starts the server and resolves once it logged the port it listens on. */
export async function startMain(env: Record<string, string>): Promise<NodeProcess> {
  const run = runMain(env);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${run.output()}`)), 30_000);
    const check = () => {
      const m = /"port":(\d+).*"msg":"listening"/.exec(run.output());
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    run.child.stdout!.on('data', check);
    run.exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited:\n${run.output()}`));
    });
  });
  return { ...run, url: `http://127.0.0.1:${port}` };
}
