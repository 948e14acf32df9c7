// A redis-server of the test's own, on a free port, that the test may kill and start again.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from '../../bench/free-port.js';
import { until } from './until.js';

export const canRunRedis = spawnSync('redis-server', ['--version']).status === 0;

export interface OwnRedis {
  url: string;
  start(): Promise<void>;
  /** SIGKILL: connections drop at once, nothing is saved. */
  kill(): void;
}

export async function ownRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const own: OwnRedis = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn(
        'redis-server',
        ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
        { stdio: 'ignore' },
      );
      await until(
        () =>
          spawnSync('redis-cli', ['-p', String(port), 'ping'])
            .stdout?.toString()
            .includes('PONG') ?? false,
      );
    },
    kill() {
      child?.kill('SIGKILL');
      child = null;
    },
  };
  await own.start();
  return own;
}
