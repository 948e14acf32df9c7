// The command line's fetch over node:http answers as fetch does: status, headers (repeated ones
// too) and body; no body for 204; a POST's body sent; a redirect followed with fetch's own rules; a
// request nothing answers a TypeError "fetch failed", and one whose answer does not come within the
// time-out too; an aborted one rejected with its reason.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_TIMEOUT_SECONDS, fetchWithin } from '../../src/cli/http-fetch.js';

const httpFetch = fetchWithin(ANSWER_TIMEOUT_SECONDS);

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      if (req.url === '/empty') return void res.writeHead(204).end();
      if (req.url === '/moved') return void res.writeHead(307, { location: '/echo?moved=1' }).end();
      if (req.url === '/slow') return void setTimeout(() => res.end('late'), 5000).unref();
      res.writeHead(200, [
        ['content-type', 'application/json'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ]);
      res.end(JSON.stringify({ method: req.method, url: req.url, auth: req.headers.authorization ?? null, body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the CLI’s fetch', () => {
  it('answers status, every header and the body, and sends a POST’s body and headers', async () => {
    const res = await httpFetch(
      new Request(`${base}/echo`, { method: 'POST', headers: { authorization: 'Bearer agb_x' }, body: '{"a":1}' }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await res.json()).toEqual({ method: 'POST', url: '/echo', auth: 'Bearer agb_x', body: '{"a":1}' });
  });

  it('gives a 204 no body', async () => {
    const res = await httpFetch(new Request(`${base}/empty`));
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
  });

  it('follows a redirect as fetch does, a 307 keeping the method and body', async () => {
    const res = await httpFetch(new Request(`${base}/moved`, { method: 'PUT', body: 'again' }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ method: 'PUT', url: '/echo?moved=1', body: 'again' });
  });

  it('rejects a request nothing answers with fetch’s TypeError, and an aborted one with its reason', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const refused = await httpFetch(new Request(`http://127.0.0.1:${closedPort}/`)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TypeError);
    expect(refused).toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });

    const controller = new AbortController();
    const pending = httpFetch(new Request(`${base}/slow`, { signal: controller.signal }));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('gives up on an answer that does not come within its time-out, as on one that never could', async () => {
    const started = Date.now();
    const late = await fetchWithin(0.3)(new Request(`${base}/slow`)).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(late).toBeInstanceOf(TypeError);
    expect(late).toMatchObject({
      message: 'fetch failed',
      cause: { message: 'no answer from the board within 0.3 s' },
    });
  });
});
