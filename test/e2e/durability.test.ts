// Durability of the embedded store through the real process: SIGKILL in the middle of a write
// load loses no acknowledged write; SIGTERM drains in-flight requests and closes the store.
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../support/server.js';
import { startMain, type NodeProcess } from '../support/process.js';
import { tempDir, unique } from '../support/temp.js';
import { until } from '../support/until.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function started(dataDir: string): Promise<NodeProcess> {
  const node = await startMain({ DATA_DIR: dataDir, ADDRESS_RATE_PER_MINUTE: '100000' });
  cleanups.push(async () => {
    if (node.child.exitCode === null) node.child.kill('SIGKILL');
    await node.exited;
  });
  return node;
}

describe('embedded store through the server process', () => {
  it('finds every acknowledged write after SIGKILL mid-write-load and a restart', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const first = await started(dir.path);

    interface Acked {
      email: string;
      cookie: string;
      account: { id: string; defaultProjectId: string };
    }
    const acked: Acked[] = [];
    let killed = false;
    const worker = async () => {
      while (!killed) {
        const client = new Client(first.url);
        const email = `${unique('load')}@example.com`;
        try {
          const res = await client.post('/api/auth/signup', { email, password: 'durable password 1' });
          if (res.status === 201)
            acked.push({ email, cookie: client.cookies.get('board_session')!, account: res.body.account });
        } catch {
          return; // the connection died with the process
        }
      }
    };
    const workers = Array.from({ length: 12 }, worker);
    await until(() => acked.length >= 150, { timeout: 60_000, what: '150 acknowledged sign-ups' });
    first.child.kill('SIGKILL');
    killed = true;
    await first.exited;
    await Promise.all(workers);
    const snapshot = [...acked];

    const second = await started(dir.path);
    for (const a of snapshot) {
      const client = new Client(second.url);
      client.cookies.set('board_session', a.cookie);
      const me = await client.get('/api/auth/me');
      expect(me.status, `${a.email} lost`).toBe(200);
      expect(me.body.user).toMatchObject({
        id: a.account.id,
        email: a.email,
        defaultProjectId: a.account.defaultProjectId,
      });
    }
    expect(snapshot.length).toBeGreaterThanOrEqual(150);
  });

  it('drains an in-flight request on SIGTERM, refuses new ones, flushes, and exits 0', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const node = await started(dir.path);
    const email = `${unique('drain')}@example.com`;
    const body = JSON.stringify({ email, password: 'drained password 1' });
    const { port } = new URL(node.url);

    // Send the headers and half the body, so the request is in flight when SIGTERM lands.
    const responded = new Promise<{ status: number; cookie: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/auth/signup',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({ status: res.statusCode!, cookie: (res.headers['set-cookie'] ?? [''])[0]!.split(';')[0]! }),
          );
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      // (No sign shows that the node has read the first bytes: it is given 200 ms to.)
      setTimeout(() => {
        node.child.kill('SIGTERM');
        // The rest once the node is draining.
        until(() => node.output().includes('"msg":"shutting down"'), { what: 'the node draining' }).then(
          () => req.end(body.slice(10)),
          reject,
        );
      }, 200);
    });
    const result = await responded;
    expect(result.status).toBe(201);
    expect(await node.exited).toBe(0);
    await expect(fetch(`${node.url}/healthz`)).rejects.toThrow();

    const again = await started(dir.path);
    const client = new Client(again.url);
    const [name, value] = result.cookie.split('=');
    client.cookies.set(name!, value!);
    const me = await client.get('/api/auth/me');
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(email);
  });
});
