// What the real process logs: one structured line per request (liveness probes aside, and a flood of
// refusals counted on one line), and never a credential.
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../support/server.js';
import { startMain, type NodeProcess } from '../support/process.js';
import { tempDir, unique } from '../support/temp.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A node of its own on the embedded store, killed after the test if it still runs. */
async function started(env: Record<string, string> = {}): Promise<NodeProcess> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const node = await startMain({ DATA_DIR: dir.path, ...env });
  cleanups.push(async () => {
    node.child.kill('SIGKILL');
    await node.exited;
  });
  return node;
}

/** Stops the node as an orchestrator would (SIGTERM); the JSON lines it logged. */
async function linesAtShutdown(node: NodeProcess): Promise<Record<string, unknown>[]> {
  node.child.kill('SIGTERM');
  await node.exited;
  return node
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('logs', () => {
  it('record request id, route, status and duration, and no password, token or cookie', async () => {
    const node = await started();
    const password = `pw-${unique('secret')}-long`;
    const client = new Client(node.url);
    await client.post('/api/auth/signup', { email: `${unique('log')}@example.com`, password });
    await client.post('/api/auth/login', { email: 'nobody@example.com', password });
    await client.post('/api/auth/change-password', { currentPassword: password, newPassword: `${password}-2` });
    const bearer = `agb_${unique('tokensecret')}`;
    await client.get('/api/whoami', { authorization: `Bearer ${bearer}` });
    const me = await client.get('/api/auth/me', { 'x-request-id': 'log-probe-1' });
    expect(me.status).toBe(200);
    // Liveness probes are answered, with their request id, but write no request line.
    const alive = await client.get('/healthz', { 'x-request-id': 'liveness-probe-1' });
    expect(alive.status).toBe(200);
    expect(alive.headers.get('x-request-id')).toBe('liveness-probe-1');
    const cookie = client.cookies.get('board_session')!;

    const lines = await linesAtShutdown(node);
    const probe = lines.find((l) => l.reqId === 'log-probe-1');
    expect(probe).toMatchObject({ route: 'GET /api/auth/me', status: 200, msg: 'request' });
    expect(typeof probe!.durationMs).toBe('number');
    expect(lines.filter((l) => l.msg === 'request').map((l) => l.status)).toEqual([201, 401, 200, 401, 200]);
    expect(lines.filter((l) => l.reqId === 'liveness-probe-1')).toEqual([]);
    const all = node.output();
    expect(all).not.toContain(password);
    expect(all).not.toContain(bearer);
    expect(all).not.toContain(cookie);
  });

  it('give a flood of refusals one request line, then one line with their count, written at the latest on shutdown', async () => {
    const node = await started({ ADDRESS_RATE_PER_MINUTE: '2' });
    const client = new Client(node.url);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push(
        (
          await client.post('/api/auth/login', {
            email: `${unique('nobody')}@example.com`,
            password: 'not the password',
          })
        ).status,
      );
    expect(statuses).toEqual([401, 401, 429, 429, 429, 429]);
    const lines = await linesAtShutdown(node);
    expect(lines.filter((l) => l.msg === 'request').map((l) => l.status)).toEqual([401, 401, 429]);
    expect(lines.filter((l) => l.msg === 'requests refused')).toEqual([
      expect.objectContaining({ refused: '127.0.0.1', route: 'POST /api/auth/login', status: 429, count: 3 }),
    ]);
  });
});
