// Streamed bodies over real uWebSockets.js (src/http/uws.ts), as the export writes them: chunks go
// out as the source yields them, no faster than the client takes them, and a client that goes
// away ends the source; a source that fails mid-way cuts the connection short.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, type HttpServer } from '../../../src/http/uws.js';
import { defineRoute, type BodyStream } from '../../../src/http/route.js';
import type { RawResponse } from '../../../src/http/responses.js';
import { quietFor, until } from '../../support/until.js';

const MB = 1024 * 1024;

/** A source the test watches: how many chunks were asked for, and whether it was ended. */
function source(chunks: number, size: number, failAt = -1) {
  const seen = { pulled: 0, ended: false };
  async function* body(): BodyStream {
    try {
      for (let i = 0; i < chunks; i++) {
        if (i === failAt) throw new Error('the store failed');
        seen.pulled++;
        yield Buffer.alloc(size, 'x');
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      seen.ended = true;
    }
  }
  return { seen, body: body() };
}

describe('streamed bodies over uWebSockets.js', () => {
  let server: HttpServer;
  let url: string;
  let next: ReturnType<typeof source> | null = null;
  const route = defineRoute({
    method: 'get',
    path: '/stream',
    group: 'test',
    summary: 'a stream',
    auth: 'none',
    bodyKind: 'none',
    rate: 'none',
    errors: [],
    responses: {},
    handler: () => ({ status: 200 }),
  });

  beforeAll(async () => {
    server = createHttpServer(
      [route],
      {
        // The pipeline hands a BodyStream on as the reply's body, as given.
        dispatch: async () => ({
          status: 200,
          headers: [['content-type', 'application/x-ndjson']],
          body: next!.body as unknown as RawResponse['body'],
        }),
        answerFixed: () => ({ status: 200, headers: [], body: '' }),
        refuse: () => ({ status: 404, headers: [], body: '' }),
        refuseRequest: () => ({ status: 404, headers: [], body: '' }),
        requestIdOf: () => 'test',
        accepting: () => true,
        started: () => undefined,
        finished: () => undefined,
      },
      1024,
    );
    url = `http://127.0.0.1:${await server.listen('127.0.0.1', 0)}/stream`;
  });
  afterAll(() => server.stopListening());

  it('writes every chunk, chunked, and ends', async () => {
    next = source(20, 64 * 1024);
    const body = await new Promise<{ bytes: number; encoding?: string }>((resolve, reject) => {
      http
        .get(url, (res) => {
          let bytes = 0;
          res.on('data', (c: Buffer) => (bytes += c.length));
          res.on('end', () => resolve({ bytes, encoding: res.headers['transfer-encoding'] }));
        })
        .on('error', reject);
    });
    expect(body).toEqual({ bytes: 20 * 64 * 1024, encoding: 'chunked' });
    expect(next.seen).toEqual({ pulled: 20, ended: true });
  });

  it('asks for no more than the client takes, and ends the source when the client goes away', async () => {
    next = source(400, MB); // 400 MiB if nothing held it back
    const req = http.get(url, (res) => res.pause()); // reads the headers, then nothing
    await new Promise<void>((resolve) => req.on('response', () => resolve()));
    // The source stops being asked once the kernel's and uWS's buffers are full.
    let last = -1;
    await until(async () => {
      const settled = next!.seen.pulled === last;
      last = next!.seen.pulled;
      await quietFor(300); // proves it is no longer asked, over a while
      return settled && next!.seen.pulled === last;
    }, 60_000);
    expect(next.seen.pulled).toBeLessThan(150);
    expect(next.seen.ended).toBe(false);
    req.destroy();
    await until(() => next!.seen.ended);
    expect(next.seen.pulled).toBeLessThan(150);
  });

  it('cuts the connection when the source fails after the status went out', async () => {
    next = source(10, 1024, 3);
    const outcome = await new Promise<string>((resolve) => {
      http
        .get(url, (res) => {
          expect(res.statusCode).toBe(200);
          res.on('data', () => undefined);
          res.on('end', () => resolve('ended whole'));
          res.on('error', (e) => resolve(`cut: ${e.message}`));
          res.on('aborted', () => resolve('cut'));
        })
        .on('error', (e) => resolve(`cut: ${e.message}`));
    });
    expect(outcome).toMatch(/^cut/);
    expect(next.seen).toEqual({ pulled: 3, ended: true });
  });

  it('answers HEAD with the headers alone, never reading the source', async () => {
    next = source(10, 1024);
    const res = await fetch(url, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    expect(next.seen.pulled).toBe(0);
  });
});
