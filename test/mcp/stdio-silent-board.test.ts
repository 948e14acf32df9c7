// The stdio MCP server against a board address that accepts the connection and never answers (a
// hung node, a proxy holding the request). Its tools called the board with no time-out of their own
// (only the lease keeper's renewal had one), so a tool call hung for as long as the connection
// lived. Each call now waits as the CLI's do (BOARD_TIMEOUT_SECONDS, shortened to 1 s here; 30 s by
// default) and the tool answers its documented refusal, BOARD_UNREACHABLE.
import net from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { closeAgents, refusal, stdioAgent } from './agents.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  await closeAgents();
  for (const c of cleanup.splice(0)) await c();
});

it('answers BOARD_UNREACHABLE when the board never answers a tool’s call', async () => {
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((s) => void sockets.add(s.on('error', () => undefined)));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((r) => (sockets.forEach((s) => s.destroy()), silent.close(r))));
  const url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
  const agent = await stdioAgent(url, 'agb_silent', { BOARD_TIMEOUT_SECONDS: '1' });

  for (const [tool, args] of [
    ['board_status', {}],
    ['claim_work', {}],
    ['create_items', { items: [{ title: 'never stored' }] }],
    ['read_shouts', {}],
  ] as const) {
    const answered = await Promise.race([
      agent.call(tool, args),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 8000)),
    ]);
    expect(answered, `${tool} still waiting after 8 s`).not.toBeNull();
    expect(refusal(answered!), tool).toMatchObject({
      code: 'BOARD_UNREACHABLE',
      status: 503,
      message: 'fetch failed: no answer from the board within 1 s',
    });
  }
}, 60_000);
