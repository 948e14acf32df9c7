// Failures that must stay contained: an unexpected error becomes INTERNAL without leaking,
// a store that cannot answer fails closed, and clients that go away do not hurt the node.
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { StoreUnavailableError, type Store } from '../../store/ports/store.js';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The embedded store with its accounts collection made to fail on demand. */
async function faultyStore(): Promise<{ store: Store; fail: (e: Error | null) => void }> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const real = await openEmbeddedStore(dir.path);
  let failure: Error | null = null;
  const accounts = new Proxy(real.accounts, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function'
        ? (...args: unknown[]) => (failure ? Promise.reject(failure) : value.apply(target, args))
        : value;
    },
  });
  const sessions = new Proxy(real.sessions, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function'
        ? (...args: unknown[]) =>
            failure instanceof StoreUnavailableError ? Promise.reject(failure) : value.apply(target, args)
        : value;
    },
  });
  return { store: { ...real, accounts, sessions, ping: real.ping, close: real.close }, fail: (e) => (failure = e) };
}

async function serve(store: Store): Promise<TestServer> {
  const srv = await startTestServer({}, store);
  cleanups.push(() => srv.stop());
  return srv;
}

describe('containment', () => {
  it('turns an unexpected error into 500 INTERNAL without leaking its message or stack', async () => {
    const { store, fail } = await faultyStore();
    const srv = await serve(store);
    const { client } = await signedUp(srv.url);
    fail(new TypeError('secret-internal-detail at /srv/app/accounts.ts:42'));
    const res = await client.get('/api/auth/me');
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('INTERNAL');
    expect(res.text).not.toContain('secret-internal-detail');
    expect(res.text).not.toMatch(/\.ts:\d+|at \w+ \(/);
    expect(res.headers.get('x-request-id')).toBe(res.body.error.requestId);
  });

  it('fails closed with 503 AUTH_UNAVAILABLE when the store cannot answer', async () => {
    const { store, fail } = await faultyStore();
    const srv = await serve(store);
    const { client } = await signedUp(srv.url);
    fail(new StoreUnavailableError(new Error('connection refused')));
    const me = await client.get('/api/auth/me');
    expect(me.status).toBe(503);
    expect(me.body.error.code).toBe('AUTH_UNAVAILABLE');
    const login = await new Client(srv.url).post('/api/auth/login', {
      email: 'a@example.com',
      password: 'whatever password',
    });
    expect(login.body.error.code).toBe('AUTH_UNAVAILABLE');
  });

  it('reports not ready when the store does not answer', async () => {
    const { store } = await faultyStore();
    const srv = await serve({ ...store, ping: () => Promise.reject(new StoreUnavailableError(new Error('down'))) });
    const res = await new Client(srv.url).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
  });
});

describe('aborted requests', () => {
  it('keeps serving after clients vanish mid-body and mid-handler, with no unhandled rejection', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const srv = await serve(await openEmbeddedStore(dir.path));
    const { port } = new URL(srv.url);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    cleanups.push(async () => void process.off('unhandledRejection', onUnhandled));

    const body = JSON.stringify({ email: 'gone@example.com', password: 'a password that is long' });
    const vanish = (bytes: string, afterMs: number) =>
      new Promise<void>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(
            `POST /api/auth/signup HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${bytes}`,
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, afterMs);
        });
        socket.on('error', () => resolve());
      });
    await Promise.all([
      ...Array.from({ length: 10 }, () => vanish(body.slice(0, 5), 20)), // mid-body
      ...Array.from({ length: 10 }, () => vanish(body, 0)), // mid-handler (bcrypt and store awaits)
    ]);
    const res = await new Client(srv.url).get('/healthz');
    expect(res.status).toBe(200);
    // Every abandoned request leaves flight (handlers finish, half-read bodies are dropped).
    await until(() => srv.server.inFlight() === 0, { timeout: 5000 }).catch(() => undefined); // asserted next
    expect(srv.server.inFlight()).toBe(0);
    expect(unhandled).toEqual([]);
  });
});
