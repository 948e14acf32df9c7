// The CLI against a board address that accepts the connection and never answers (a hung node, a
// proxy holding the request). docs/agents.md: exit 6 is "Unavailable: a 5xx, no answer at all, or
// something other than the board answered". The CLI's fetch once set no time-out, so
// `agent-board status` waited forever: a script never got its exit code. Here the time-out is
// shortened to 1 s (BOARD_TIMEOUT_SECONDS; 30 s by default).
import net from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { tempDir, type TempDir } from '../support/temp.js';
import { start, type Running } from './run.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

it('exits 6 when the board accepts the connection but never answers', async () => {
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((s) => void sockets.add(s.on('error', () => undefined)));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((r) => (sockets.forEach((s) => s.destroy()), silent.close(r))));
  const dir: TempDir = await tempDir();
  cleanup.push(() => dir.remove());
  const url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
  const r: Running = start(['status'], {
    XDG_CONFIG_HOME: dir.path,
    BOARD_URL: url,
    BOARD_TOKEN: 'agb_x',
    BOARD_TIMEOUT_SECONDS: '1',
  });
  cleanup.push(() => r.child.kill('SIGKILL'));
  const ended = await Promise.race([r.ended, new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000))]);
  expect(ended, 'agent-board status still waiting after 10 s').not.toBeNull();
  expect(ended!.code).toBe(6);
  expect(ended!.stderr).toMatch(/BOARD_UNREACHABLE \(503\): fetch failed: no answer from the board within 1 s/);
}, 20_000);
