// The pipeline's stages run as steps (store/ports/maybe.ts): a request whose every stage answers
// now gets its response now, one with a step that waits gets a promise, and a reply that cannot be
// written (a body JSON cannot hold) is refused as 500 INTERNAL either way, logged, never thrown.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Authenticator } from '../../src/auth/authenticator.js';
import { ProjectSelector } from '../../src/auth/project-selection.js';
import { ResolutionObserver } from '../../src/errors/observed-resolution.js';
import { defineRoute, type Reply, type Route } from '../../src/http/route.js';
import { Pipeline, type RawRequest } from '../../src/http/pipeline.js';
import type { RawResponse } from '../../src/http/responses.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';

const NOW = Date.UTC(2026, 10, 27, 12);
const errors: unknown[] = [];
const logger = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });

const pipeline = new Pipeline({
  authenticator: new Authenticator({} as never), // no route here asks for a credential
  operators: { admit: () => Promise.reject(new Error('no operators here')) },
  selector: new ProjectSelector({} as never),
  limiter: new MemoryRateLimiter(),
  observer: new ResolutionObserver(
    () => NOW,
    () => undefined,
  ),
  logger,
  publicUrl: 'http://localhost',
  allowedOrigins: new Set(),
  clientAddress: (peer) => peer,
  csrfKey: Buffer.alloc(32),
  cookieSecure: false,
  addressRatePerMinute: 1000,
  boardRateScale: 1,
  clock: () => NOW,
});

/** A route with a query, so the request goes through every stage, answering with `reply`. */
const route = (reply: () => Reply | Promise<Reply>): Route =>
  defineRoute<undefined, { n?: string }>({
    group: 'board',
    method: 'get',
    path: '/api/steps',
    summary: 'test',
    auth: 'none',
    rate: 'none',
    bodyKind: 'none',
    query: z.object({ n: z.string().optional() }),
    errors: [],
    responses: { 200: { description: 'ok' } },
    handler: reply,
  }) as Route;

const raw = (): RawRequest => ({
  method: 'get',
  path: '/api/steps',
  query: 'n=1',
  headers: {},
  params: [],
  remoteAddress: '192.0.2.1',
  body: Buffer.alloc(0),
});
const bodyOf = (r: RawResponse) => JSON.parse(String(r.body)) as { error?: { code: string }; ok?: boolean };

describe('pipeline steps', () => {
  it('answers now when every stage and the handler answer now', () => {
    const response = pipeline.run(
      route(() => ({ status: 200, body: { ok: true } })),
      raw(),
      'req-now',
    );
    expect(response).not.toBeInstanceOf(Promise);
    expect((response as RawResponse).status).toBe(200);
    expect(bodyOf(response as RawResponse)).toEqual({ ok: true });
  });

  it('answers later when the handler waits', async () => {
    const response = pipeline.run(
      route(async () => ({ status: 200, body: { ok: true } })),
      raw(),
      'req-later',
    );
    expect(response).toBeInstanceOf(Promise);
    expect((await response).status).toBe(200);
  });

  it('refuses a reply JSON cannot hold as 500 INTERNAL, logged with its request, whether it came now or later', async () => {
    errors.length = 0;
    for (const [id, reply] of [
      ['req-bad-now', () => ({ status: 200, body: { n: 1n } })],
      ['req-bad-later', async () => ({ status: 200, body: { n: 1n } })],
    ] as const) {
      const response = await pipeline.run(route(reply), raw(), id);
      expect(response.status).toBe(500);
      expect(bodyOf(response).error?.code).toBe('INTERNAL');
    }
    expect(errors.map((e) => (e as { reqId: string }).reqId)).toEqual(['req-bad-now', 'req-bad-later']);
  });

  it('rejects a request no route took in the one envelope, with an AppError’s details and headers (a socket upgrade’s refusal)', () => {
    const response = pipeline.reject(
      'RATE_LIMITED',
      'req-1',
      'too many',
      { scope: 'sockets', limit: 20 },
      { 'X-RateLimit-Remaining': '5' },
    );
    expect(response.status).toBe(429);
    expect(response.headers[0]).toEqual(['x-request-id', 'req-1']);
    expect(response.headers).toEqual(
      expect.arrayContaining([
        ['X-RateLimit-Remaining', '5'],
        ['content-type', 'application/json; charset=utf-8'],
        ['cache-control', 'no-store'],
      ]),
    );
    expect(JSON.parse(String(response.body))).toMatchObject({
      error: {
        code: 'RATE_LIMITED',
        status: 429,
        message: 'too many',
        requestId: 'req-1',
        details: { scope: 'sockets', limit: 20 },
        example: null,
      },
    });
  });
});
