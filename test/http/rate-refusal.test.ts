// A request over its budget is refused with exactly the 429 the contract names (status, code, the
// nine rate headers and Retry-After, the one error envelope), answered now when the budget is
// counted on this node (no promise, no turn of the event loop: under a flood the refusals are the
// load, so they must cost no more than an answer), and every refusal still counted for the
// operators' abuse ranking.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Authenticator } from '../../src/auth/authenticator.js';
import type { Identity } from '../../src/auth/identity.js';
import { ProjectSelector } from '../../src/auth/project-selection.js';
import { abuseSignals } from '../../src/admin/abuse.js';
import { bucketOf, dayOf, UsageRecorder, usageId } from '../../src/admin/usage.js';
import { AppError } from '../../src/errors/app-error.js';
import { FAILED_RETOLD_MS, ResolutionObserver, type ResolutionNote } from '../../src/errors/observed-resolution.js';
import { ERRORS } from '../../src/errors/registry.js';
import { defineRoute, type Route } from '../../src/http/route.js';
import { Pipeline, type RawRequest } from '../../src/http/pipeline.js';
import type { RawResponse } from '../../src/http/responses.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { PLANS } from '../../src/plans.js';
import type { UsageRecord } from '../../store/ports/store.js';
import { workspaceToken } from '../support/identities.js';

/** A minute's start: the board window runs NOW..NOW+60 s, so every refusal here says Retry-After: 60. */
const NOW = Date.UTC(2026, 10, 27, 12);
const RESET = String(NOW / 1000 + 60);
const FREE = PLANS.free;

const agent = workspaceToken({
  principal: 'agent:flooder',
  accountId: 'acct-flood',
  agentId: 'flooder',
  prefix: 'pfx',
  boardId: 'board-flood',
});

/** The one credential it knows (the same identity each time, as the credential cache gives it); any other Bearer is refused. */
const authenticator = {
  authenticate(kind: string, headers: Record<string, string>): Identity | null {
    if (kind === 'none') return null;
    if (headers['authorization'] === 'Bearer good') return agent;
    throw new AppError('INVALID_SERVICE_TOKEN');
  },
} as unknown as Authenticator;

/** A pipeline on the free plan's budgets; `clock` gives the time of every request (NOW unless a test moves it). */
function setUp(clock: () => number = () => NOW, addressRatePerMinute = 1000) {
  const observer = new ResolutionObserver(clock);
  const recorded: { status: number; principal: string | null }[] = [];
  const usage = new UsageRecorder({ usage: {} as never }, () => NOW);
  const lines: { reqId: string; status: number; msg: string }[] = [];
  const logger = pino(
    { level: 'info', timestamp: pino.stdTimeFunctions.epochTime },
    {
      write: (text: string) =>
        void lines.push(
          ...text
            .trimEnd()
            .split('\n')
            .map((l) => JSON.parse(l)),
        ),
    },
  );
  const pipeline = new Pipeline({
    authenticator,
    operators: { admit: () => Promise.reject(new Error('no operators here')) },
    selector: new ProjectSelector({} as never),
    limiter: new MemoryRateLimiter(),
    observer,
    logger,
    publicUrl: 'https://board.example',
    allowedOrigins: new Set(),
    clientAddress: (peer) => peer,
    record: (ctx, status) => {
      recorded.push({ status, principal: ctx.identity?.principal ?? null });
      usage.record(ctx, status);
    },
    csrfKey: Buffer.alloc(32),
    cookieSecure: false,
    addressRatePerMinute,
    boardRateScale: 1,
    clock,
  });
  return { pipeline, observer, recorded, usage, lines };
}

const boardRoute = (method: 'get' | 'post', rate: 'read' | 'write'): Route =>
  defineRoute<undefined, { n?: string }>({
    group: 'board',
    method,
    path: '/api/flooded',
    summary: 'test',
    auth: 'bearer-or-session',
    rate,
    rateHeaders: true,
    bodyKind: 'none',
    query: z.object({ n: z.string().optional() }).strict(),
    errors: [],
    responses: { 200: { description: 'ok' } },
    handler: () => ({ status: 200, body: { ok: true } }),
  }) as Route;

const request = (method: string, authorization = 'Bearer good', query = ''): RawRequest => ({
  method,
  path: '/api/flooded',
  query,
  headers: { authorization },
  params: [],
  remoteAddress: '203.0.113.9',
  body: Buffer.alloc(0),
});

/** The nine headers, in the order they are written. */
const nine = (
  general: [number, number],
  req: [number, number],
  write: [number, number],
  reset = RESET,
): [string, string][] => [
  ['X-RateLimit-Limit', String(general[0])],
  ['X-RateLimit-Remaining', String(general[1])],
  ['X-RateLimit-Reset', reset],
  ['X-RateLimit-Request-Limit', String(req[0])],
  ['X-RateLimit-Request-Remaining', String(req[1])],
  ['X-RateLimit-Request-Reset', reset],
  ['X-RateLimit-Write-Limit', String(write[0])],
  ['X-RateLimit-Write-Remaining', String(write[1])],
  ['X-RateLimit-Write-Reset', reset],
];

const insufficient = {
  code: 'RATE_LIMITED',
  source: 'next-successful-operation',
  scope: 'all-workspaces',
  correlationWindowHours: 24,
  minimumDistinctWorkspaces: 3,
  status: 'insufficient-aggregate',
  observations: null,
  distinctWorkspaces: null,
  path: null,
};

/** The envelope, property by property in the order the contract's examples and every earlier build wrote it. */
const envelope = (requestId: string, limit: number, resolution: object = insufficient): string =>
  JSON.stringify({
    error: {
      code: 'RATE_LIMITED',
      status: 429,
      meaning: ERRORS.RATE_LIMITED.meaning,
      fix: ERRORS.RATE_LIMITED.fix,
      example: null,
      links: {
        contract: 'https://board.example/docs/openapi.json',
        changelog: 'https://board.example/changelog',
        blog: 'https://board.example/dispatches#rate_limited',
      },
      observedResolution: resolution,
      message: ERRORS.RATE_LIMITED.meaning,
      requestId,
      details: { limit, resetAt: NOW / 1000 + 60 },
    },
  });

/** Runs a request that must be answered now (the budget is counted here), and gives its response. */
function now(pipeline: Pipeline, route: Route, raw: RawRequest, id: string): RawResponse {
  const response = pipeline.run(route, raw, id);
  expect(response, id).not.toBeInstanceOf(Promise);
  return response as RawResponse;
}

describe('a request over its budget', () => {
  it('is refused now with 429 RATE_LIMITED, the nine headers, Retry-After and the one envelope, byte for byte', () => {
    const { pipeline } = setUp();
    const read = boardRoute('get', 'read');
    for (let i = 0; i < FREE.requestsPerMinute; i++)
      expect(now(pipeline, read, request('get'), `ok-${i}`).status).toBe(200);
    for (const id of ['over-1', 'over-2', 'over-3']) {
      const refused = now(pipeline, read, request('get'), id);
      expect(refused.status).toBe(429);
      expect(refused.headers).toEqual([
        ['x-request-id', id],
        ['cache-control', 'no-store'],
        ...nine([FREE.requestsPerMinute, 0], [FREE.requestsPerMinute, 0], [FREE.writesPerMinute, FREE.writesPerMinute]),
        ['Retry-After', '60'],
        ['content-type', 'application/json; charset=utf-8'],
      ]);
      expect(String(refused.body)).toBe(envelope(id, FREE.requestsPerMinute));
    }
  });

  it('on the write budget says so in its headers: the general budget is the write budget, the refusal’s own', () => {
    const { pipeline } = setUp();
    const write = boardRoute('post', 'write');
    for (let i = 0; i < FREE.writesPerMinute; i++)
      expect(now(pipeline, write, request('post'), `w-${i}`).status).toBe(200);
    const refused = now(pipeline, write, request('post'), 'w-over');
    expect(refused.status).toBe(429);
    // The request budget was drawn on by the refused write too (one draw, both budgets), as it always was.
    const requestsLeft = FREE.requestsPerMinute - FREE.writesPerMinute - 1;
    expect(refused.headers).toEqual([
      ['x-request-id', 'w-over'],
      ['cache-control', 'no-store'],
      ...nine([FREE.writesPerMinute, 0], [FREE.requestsPerMinute, requestsLeft], [FREE.writesPerMinute, 0]),
      ['Retry-After', '60'],
      ['content-type', 'application/json; charset=utf-8'],
    ]);
    expect(String(refused.body)).toBe(envelope('w-over', FREE.writesPerMinute));
    // Reads stay available after the write budget is spent.
    expect(now(pipeline, boardRoute('get', 'read'), request('get'), 'read-after').status).toBe(200);
  });

  it('says each refusal’s own budgets as the window runs: Retry-After counting down, the write budget, then the request budget', () => {
    let at = NOW;
    const { pipeline } = setUp(() => at);
    const read = boardRoute('get', 'read');
    const write = boardRoute('post', 'write');
    const refused = (route: Route, method: string, id: string, retryAfter: string, ...budgets: [number, number][]) => {
      const response = now(pipeline, route, request(method), id);
      expect(response.status, id).toBe(429);
      expect(response.headers, id).toEqual([
        ['x-request-id', id],
        ['cache-control', 'no-store'],
        ...nine(budgets[0]!, budgets[1]!, budgets[2]!),
        ['Retry-After', retryAfter],
        ['content-type', 'application/json; charset=utf-8'],
      ]);
      expect(String(response.body), id).toBe(envelope(id, budgets[0]![0]));
    };
    const [requests, writes] = [FREE.requestsPerMinute, FREE.writesPerMinute];
    for (let i = 0; i < writes; i++) now(pipeline, write, request('post'), `w-${i}`);
    // Each refused write still draws on the request budget: no two refusals say the same.
    refused(write, 'post', 'w-over-1', '60', [writes, 0], [requests, requests - writes - 1], [writes, 0]);
    at = NOW + 1500;
    refused(write, 'post', 'w-over-2', '59', [writes, 0], [requests, requests - writes - 2], [writes, 0]);
    refused(write, 'post', 'w-over-3', '59', [writes, 0], [requests, requests - writes - 3], [writes, 0]);
    for (let i = 0; i < requests - writes - 3; i++) now(pipeline, read, request('get'), `r-${i}`);
    refused(read, 'get', 'r-over-1', '59', [requests, 0], [requests, 0], [writes, 0]);
    refused(read, 'get', 'r-over-2', '59', [requests, 0], [requests, 0], [writes, 0]);
    at = NOW + 30_000;
    refused(read, 'get', 'r-over-3', '30', [requests, 0], [requests, 0], [writes, 0]);
    // A write refused on the spent request budget says what a read refused then says.
    refused(write, 'post', 'w-over-4', '30', [requests, 0], [requests, 0], [writes, 0]);
    at = NOW + 59_999;
    refused(read, 'get', 'r-over-4', '1', [requests, 0], [requests, 0], [writes, 0]);
  });

  it('carries the resolution observed since the last refusal, not one kept from before', () => {
    const { pipeline, observer } = setUp();
    const read = boardRoute('get', 'read');
    for (let i = 0; i < FREE.requestsPerMinute; i++) now(pipeline, read, request('get'), `ok-${i}`);
    expect(String(now(pipeline, read, request('get'), 'before').body)).toBe(envelope('before', FREE.requestsPerMinute));
    for (const workspace of ['w1', 'w2', 'w3']) {
      observer.hear({ kind: 'resolution.failed', workspace, code: 'RATE_LIMITED', at: NOW });
      observer.hear({ kind: 'resolution.observed', workspace, code: 'RATE_LIMITED', operation: 'GET /api/x', at: NOW });
    }
    const observed = {
      ...insufficient,
      status: 'observed',
      observations: 3,
      distinctWorkspaces: 3,
      path: 'GET /api/x',
    };
    expect(String(now(pipeline, read, request('get'), 'after').body)).toBe(
      envelope('after', FREE.requestsPerMinute, observed),
    );
  });

  it('refused before it drew on the budget (a bad query) still carries the budget as it stands, nothing counted', () => {
    const { pipeline } = setUp();
    const read = boardRoute('get', 'read');
    now(pipeline, read, request('get'), 'one');
    const refused = now(pipeline, read, request('get', 'Bearer good', 'unknown=1'), 'bad-query');
    expect(refused.status).toBe(400);
    expect(refused.headers.slice(0, 11)).toEqual([
      ['x-request-id', 'bad-query'],
      ['cache-control', 'no-store'],
      ...nine(
        [FREE.requestsPerMinute, FREE.requestsPerMinute - 1],
        [FREE.requestsPerMinute, FREE.requestsPerMinute - 1],
        [FREE.writesPerMinute, FREE.writesPerMinute],
      ),
    ]);
    expect(now(pipeline, read, request('get'), 'two').headers).toContainEqual([
      'X-RateLimit-Remaining',
      String(FREE.requestsPerMinute - 2),
    ]);
  });

  it('with a credential that is not valid is refused as before: 401, no rate headers, no budget drawn', () => {
    const { pipeline } = setUp();
    const refused = now(pipeline, boardRoute('get', 'read'), request('get', 'Bearer bad'), 'bad-token');
    expect(refused.status).toBe(401);
    expect(JSON.parse(String(refused.body)).error.code).toBe('INVALID_SERVICE_TOKEN');
    expect(refused.headers.map(([name]) => name)).toEqual(['x-request-id', 'cache-control', 'content-type']);
  });

  it('is counted each time, and logged once, then as one line with its count: the operators’ ranking sees every refused request', async () => {
    const { pipeline, recorded, usage, lines } = setUp();
    const read = boardRoute('get', 'read');
    const over = 250;
    for (let i = 0; i < FREE.requestsPerMinute + over; i++) now(pipeline, read, request('get'), `r-${i}`);
    now(pipeline, read, request('get', 'Bearer bad'), 'bad');
    await new Promise((r) => setImmediate(r)); // request lines go out at the end of the turn
    expect(recorded.filter((r) => r.status === 429)).toHaveLength(over);
    // The first refusal has its request line; the rest are counted until the quiet period ends.
    expect(lines.filter((l) => l.msg === 'request' && l.status === 429).map((l) => l.reqId)).toEqual([
      `r-${FREE.requestsPerMinute}`,
    ]);
    expect(lines.filter((l) => l.msg === 'request')).toHaveLength(FREE.requestsPerMinute + 1 + 1);
    pipeline.close();
    expect(lines.filter((l) => l.msg === 'requests refused')).toEqual([
      expect.objectContaining({ refused: agent.principal, route: 'GET /api/flooded', status: 429, count: over - 1 }),
    ]);

    // What a flush writes, and the ranking read from it.
    const rows = new Map<string, UsageRecord>();
    const store = {
      usage: {
        async add(id: string, key: Pick<UsageRecord, 'day' | 'scope' | 'key'>, counts: Record<string, number>) {
          rows.set(id, { _id: id, ...key, counts } as unknown as UsageRecord);
          return true;
        },
        async find(filter: { day: string; scope: string }) {
          return [...rows.values()].filter((r) => r.day === filter.day && r.scope === filter.scope);
        },
      },
    };
    (usage as unknown as { store: typeof store }).store = store;
    await usage.flush();
    const day = dayOf(NOW);
    expect(rows.get(usageId(day, 'principal', agent.principal))?.counts).toEqual({
      requests: FREE.requestsPerMinute + over,
      r429: over,
    });
    expect(rows.get(usageId(day, 'address', '203.0.113.9'))?.counts).toEqual({
      requests: FREE.requestsPerMinute + over + 1,
      r429: over,
      r401: 1,
    });
    expect(rows.get(usageId(bucketOf(NOW), 'principal', agent.principal))?.counts).toEqual({ r429: over });
    const signals = await abuseSignals(store as never, NOW, 10);
    expect(signals.refusals.principals).toEqual([{ key: agent.principal, count: over, detail: { '429': over } }]);
    expect(signals.refusals.addresses).toEqual([
      { key: '203.0.113.9', count: over + 1, detail: { '429': over, '401': 1 } },
    ]);
  });
});

describe('refusals without a credential in the log', () => {
  it('count an IPv6 caller by its /64, as its budget does: addresses rotated within it log one request line', async () => {
    const { pipeline, lines } = setUp(() => NOW, 1);
    const route = defineRoute({
      group: 'accounts',
      method: 'post',
      path: '/api/by-address',
      summary: 'test',
      auth: 'none',
      rate: 'address',
      bodyKind: 'none',
      errors: [],
      responses: { 200: { description: 'ok' } },
      handler: () => ({ status: 200, body: { ok: true } }),
    }) as Route;
    const from = (host: number): RawRequest => ({
      ...request('post'),
      path: '/api/by-address',
      headers: {},
      remoteAddress: `2001:db8:1:2::${host}`,
    });
    const statuses: number[] = [];
    for (const host of [1, 2, 3, 4]) statuses.push((await pipeline.run(route, from(host), `v6-${host}`)).status);
    expect(statuses).toEqual([200, 429, 429, 429]);
    await new Promise((r) => setImmediate(r)); // request lines go out at the end of the turn
    expect(lines.filter((l) => l.msg === 'request').map((l) => l.reqId)).toEqual(['v6-1', 'v6-2']);
    pipeline.close();
    expect(lines.filter((l) => l.msg === 'requests refused')).toEqual([
      expect.objectContaining({ refused: '2001:db8:1:2::/64', route: 'POST /api/by-address', count: 2 }),
    ]);
  });
});

describe('the refusals of a flood, heard by the other nodes', () => {
  /** An observer on a clock the test moves, and the notes it tells every node (itself included). */
  const observing = () => {
    const clock = { at: NOW };
    const told: ResolutionNote[] = [];
    const observer: ResolutionObserver = new ResolutionObserver(
      () => clock.at,
      (note) => {
        told.push(note);
        observer.hear(note);
      },
    );
    return { clock, told, observer };
  };

  it('are told once a second per workspace and code; another code, workspace or a success between is told at once', () => {
    const { clock, told, observer } = observing();
    for (let i = 0; i < 100; i++, clock.at += 9) observer.failed('board:flooded', 'RATE_LIMITED');
    expect(told).toEqual([{ kind: 'resolution.failed', workspace: 'board:flooded', code: 'RATE_LIMITED', at: NOW }]);
    clock.at = NOW + FAILED_RETOLD_MS;
    observer.failed('board:flooded', 'RATE_LIMITED');
    observer.failed('board:flooded', 'AUTH_REQUIRED');
    observer.failed('board:other', 'RATE_LIMITED');
    observer.succeeded('board:flooded', 'GET /api/status');
    observer.failed('board:flooded', 'AUTH_REQUIRED');
    const at = NOW + FAILED_RETOLD_MS;
    expect(told).toEqual([
      { kind: 'resolution.failed', workspace: 'board:flooded', code: 'RATE_LIMITED', at: NOW },
      { kind: 'resolution.failed', workspace: 'board:flooded', code: 'RATE_LIMITED', at },
      { kind: 'resolution.failed', workspace: 'board:flooded', code: 'AUTH_REQUIRED', at },
      { kind: 'resolution.failed', workspace: 'board:other', code: 'RATE_LIMITED', at },
      {
        kind: 'resolution.observed',
        workspace: 'board:flooded',
        code: 'AUTH_REQUIRED',
        operation: 'GET /api/status',
        at,
      },
      { kind: 'resolution.failed', workspace: 'board:flooded', code: 'AUTH_REQUIRED', at },
    ]);
  });

  it('leave the last failure’s time exact on the node that refused: the success after it correlates within 24 h of it', () => {
    const { clock, told, observer } = observing();
    observer.failed('board:flooded', 'RATE_LIMITED');
    clock.at = NOW + 900;
    observer.failed('board:flooded', 'RATE_LIMITED'); // untold, and the one the window counts from
    clock.at = NOW + 900 + 24 * 3600_000;
    observer.succeeded('board:flooded', 'GET /api/status');
    expect(told.map((n) => n.kind)).toEqual(['resolution.failed', 'resolution.observed']);
  });
});
