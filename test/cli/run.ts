// The agent-board bin as a subprocess: run to its end, or started and read as it goes (login, watch).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cliArgs } from '../support/built.js';

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A running bin: what it printed so far, a wait for a line, and its end. */
export interface Running {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** The first line of `stream` matching `pattern`, waiting up to `ms`. */
  line(stream: 'stdout' | 'stderr', pattern: RegExp, ms?: number): Promise<string>;
  ended: Promise<Ran>;
}

/** The environment a run sees: only what it is given (and PATH/HOME), never the test runner's BOARD_*. */
export function start(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, [...cliArgs(), ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/nonexistent', ...env },
  });
  let out = '';
  let err = '';
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  child.stdout.on('data', (c: Buffer) => ((out += c.toString()), wake()));
  child.stderr.on('data', (c: Buffer) => ((err += c.toString()), wake()));
  const ended = new Promise<Ran>((resolve) =>
    child.on('close', (code) => (wake(), resolve({ code, stdout: out, stderr: err }))),
  );
  let exited = false;
  void ended.then(() => (exited = true));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    ended,
    line(stream, pattern, ms = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`no ${stream} line matching ${pattern} within ${ms} ms; stdout: ${out}\nstderr: ${err}`)),
          ms,
        );
        const look = () => {
          const lines = (stream === 'stdout' ? out : err).split('\n');
          if (!exited) lines.pop(); // a line still being written
          const found = lines.find((l) => pattern.test(l));
          if (found !== undefined) return (clearTimeout(timer), resolve(found));
          if (exited)
            return (
              clearTimeout(timer),
              reject(new Error(`exited without a ${stream} line matching ${pattern}; stdout: ${out}\nstderr: ${err}`))
            );
          waiters.push(look);
        };
        look();
      });
    },
  };
}

export const run = (args: string[], env: Record<string, string>): Promise<Ran> => start(args, env).ended;
