// What the transport answers (hardening issue): HEAD on every GET route, and a start-up that
// refuses uWebSockets.js's slow JavaScript fallback.
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { entryArgs } from '../support/built.js';
import { startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

/** A HEAD over node:http, which reads no body after HEAD (fetch would hide a body sent anyway). */
function head(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bodyBytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(`${srv.url}${path}`, { method: 'HEAD', headers }, (res) => {
      let bodyBytes = 0;
      res.on('data', (c: Buffer) => (bodyBytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bodyBytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HEAD', () => {
  it('answers every GET route as GET would, without the body', async () => {
    const probe = await head('/healthz');
    expect(probe.status).toBe(200);
    expect(probe.headers['content-length']).toBe(
      String(Buffer.byteLength(await (await fetch(`${srv.url}/healthz`)).text())),
    );
    expect(probe.bodyBytes).toBe(0);
    const board = await newBoard(srv.url);
    const agent = await board.agent('header-reader');
    const status = await head('/api/status', { authorization: agent.defaults.authorization! });
    expect(status.status).toBe(200);
    expect(status.headers['x-ratelimit-request-remaining']).toMatch(/^\d+$/);
    expect(status.bodyBytes).toBe(0);
    expect((await head('/api/status')).status).toBe(401);
  });

  it('is 405 with Allow on a route that takes only writes, and 404 where nothing is', async () => {
    const post = await head('/api/claim');
    expect(post.status).toBe(405);
    expect(post.headers['allow']).toBe('POST');
    expect(post.bodyBytes).toBe(0);
    expect((await head('/no/such/route')).status).toBe(404);
  });
});

describe('answers ready at once', () => {
  // Whole responses not ready inside their uWS callback are written together at the end of the
  // loop's turn (src/http/uws.ts): each must still reach its own request, on its own connection.
  it('go each to its own request: 120 at once on two boards, reads and writes, each with its request id and its own board', async () => {
    const boards = [await newBoard(srv.url), await newBoard(srv.url)];
    const agents = await Promise.all(boards.map((b) => b.agent('together')));
    const calls = Array.from({ length: 120 }, (_, i) => {
      const b = i % 2;
      const id = `together-${i}`;
      const headers = { 'x-request-id': id };
      const res =
        i % 3 === 0
          ? agents[b]!.post('/api/items', { title: `together ${i}` }, headers)
          : i % 3 === 1
            ? agents[b]!.get('/api/status', headers)
            : agents[b]!.get('/api/items?limit=500', headers);
      return res.then((r) => ({ i, b, id, r }));
    });
    for (const { i, b, id, r } of await Promise.all(calls)) {
      expect(r.status, r.text).toBe(i % 3 === 0 ? 201 : 200);
      expect(r.headers.get('x-request-id')).toBe(id);
      if (i % 3 === 0) expect(r.body.title).toBe(`together ${i}`);
      else if (i % 3 === 1) expect(r.body.projectId).toBe(boards[b]!.projectId);
      else
        expect((r.body.items as { title: string }[]).every((item) => Number(item.title.split(' ')[1]) % 2 === b)).toBe(
          true,
        );
    }
    // Every write landed once, on its own board.
    for (const b of [0, 1]) {
      const titles = ((await agents[b]!.get('/api/items?limit=500')).body.items as { title: string }[])
        .map((item) => item.title)
        .sort();
      expect(titles).toEqual(
        Array.from({ length: 120 }, (_, i) => i)
          .filter((i) => i % 3 === 0 && i % 2 === b)
          .map((i) => `together ${i}`)
          .sort(),
      );
    }
  });
});

describe('start-up', () => {
  it('refuses to run on uWebSockets.js’s JavaScript fallback, with a clear message', () => {
    const run = spawnSync(process.execPath, entryArgs('src/main.ts'), {
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        UWS_USE_FALLBACK: '1',
        SECRET_KEY: 'k'.repeat(32),
        DATA_DIR: fileURLToPath(new URL('../../.tmp/fallback-start', import.meta.url)),
      },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/uWebSockets\.js has no native binary for Node .* slow JavaScript server/);
  });
});

describe('listening', () => {
  it('refuses a port another node already listens on, instead of sharing it', async () => {
    const port = new URL(srv.url).port;
    await expect(startTestServer({ PORT: port })).rejects.toThrow(/cannot listen/);
    expect((await fetch(`${srv.url}/healthz`)).status).toBe(200);
  });
});
