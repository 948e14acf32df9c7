// The contract's Part 4 conventions, over real HTTP, on a representative route of each
// authentication kind: none (login), optional session (logout), session (change-password),
// Bearer or session (whoami).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/auth/authenticator.js';
import { Client, signedUp, startTestServer, type Res, type TestServer } from '../support/server.js';
import { unique } from '../support/temp.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

function expectError(res: Res, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.body.error).toMatchObject({ code, status, example: null });
  for (const field of ['message', 'meaning', 'fix', 'requestId']) expect(typeof res.body.error[field]).toBe('string');
  expect(res.body.error.links).toEqual({
    contract: 'http://board.test/docs/openapi.json',
    changelog: 'http://board.test/changelog',
    blog: expect.stringContaining('http://board.test/dispatches'),
  });
  expect(res.body.error.observedResolution).toMatchObject({
    code,
    correlationWindowHours: 24,
    minimumDistinctWorkspaces: 3,
  });
  expect(res.headers.get('x-request-id')).toBe(res.body.error.requestId);
}

interface BodyRoute {
  kind: string;
  path: string;
  valid: () => Promise<{ client: Client; body: Record<string, unknown> }>;
}

const bodyRoutes: BodyRoute[] = [
  {
    kind: 'no credential',
    path: '/api/auth/login',
    valid: async () => ({ client: new Client(srv.url), body: { email: 'a@example.com', password: 'x' } }),
  },
  {
    kind: 'optional session',
    path: '/api/auth/logout',
    valid: async () => ({ client: (await signedUp(srv.url)).client, body: {} }),
  },
  {
    kind: 'session',
    path: '/api/auth/change-password',
    valid: async () => {
      const user = await signedUp(srv.url);
      return { client: user.client, body: { currentPassword: user.password, newPassword: 'another long password' } };
    },
  },
];

describe.each(bodyRoutes)('body conventions on POST $path ($kind)', ({ path, valid }) => {
  it('answers 415 JSON_REQUIRED for a non-JSON body', async () => {
    const { client, body } = await valid();
    const res = await client.request('POST', path, {
      raw: JSON.stringify(body),
      headers: { 'content-type': 'text/plain' },
    });
    expectError(res, 415, 'JSON_REQUIRED');
  });

  it('answers 400 INVALID_JSON for malformed JSON', async () => {
    const { client } = await valid();
    const res = await client.request('POST', path, {
      raw: '{"email": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 400, 'INVALID_JSON');
  });

  it('answers 400 INVALID_INPUT naming an unknown property', async () => {
    const { client, body } = await valid();
    const res = await client.post(path, { ...body, surprise: true });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.error.message).toContain('surprise');
    expect(res.body.error.details.field).toBe('body.surprise');
  });

  it('answers 400 INVALID_INPUT naming a field of the wrong type', async () => {
    const { client, body } = await valid();
    const key = Object.keys(body)[0];
    const res = await client.post(path, key ? { ...body, [key]: 42 } : []);
    expectError(res, 400, 'INVALID_INPUT');
    if (key) expect(res.body.error.message).toContain(`body.${key}`);
  });

  it('answers 413 BODY_TOO_LARGE over the 256 KiB default cap, before reading it all', async () => {
    const { client } = await valid();
    const res = await client.request('POST', path, {
      raw: JSON.stringify({ pad: 'x'.repeat(300 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 413, 'BODY_TOO_LARGE');
  });

  it('answers 403 CSRF_REJECTED for a cross-site browser write, and accepts our own origin', async () => {
    const { client, body } = await valid();
    expectError(await client.post(path, body, { origin: 'https://evil.example' }), 403, 'CSRF_REJECTED');
    expectError(await client.post(path, body, { 'sec-fetch-site': 'cross-site' }), 403, 'CSRF_REJECTED');
    const own = await client.post(path, body, { origin: 'http://board.test' });
    expect(own.status).not.toBe(403);
  });
});

describe('request ids', () => {
  it('puts an x-request-id on every response, echoing a well-formed incoming one', async () => {
    const c = new Client(srv.url);
    for (const res of [
      await c.get('/healthz'),
      await c.get('/api/whoami'),
      await c.get('/nope'),
      await c.post('/api/auth/login', {}),
    ]) {
      expect(res.headers.get('x-request-id')).toMatch(/^[\w.:-]{1,128}$/);
    }
    expect((await c.get('/healthz', { 'x-request-id': 'trace-123' })).headers.get('x-request-id')).toBe('trace-123');
    expect((await c.get('/healthz', { 'x-request-id': 'bad id with spaces' })).headers.get('x-request-id')).not.toBe(
      'bad id with spaces',
    );
  });
});

describe('unknown routes', () => {
  it('answers 404 NOT_FOUND for an unknown path and 405 METHOD_NOT_ALLOWED with Allow for a wrong method', async () => {
    const c = new Client(srv.url);
    expectError(await c.get('/api/nothing-here'), 404, 'NOT_FOUND');
    const wrong = await c.request('DELETE', '/api/auth/login');
    expectError(wrong, 405, 'METHOD_NOT_ALLOWED');
    expect(wrong.headers.get('allow')).toBe('POST');
  });
});

describe('session authentication (GET /api/auth/me)', () => {
  it('serves the signed-in user, and 401 UNAUTHENTICATED clearing the cookie once the session is gone', async () => {
    const { client, email } = await signedUp(srv.url);
    const me = await client.get('/api/auth/me');
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(email);
    expect(me.body.referral).toMatchObject({ months: 0, referred: false });
    const stale = new Map(client.cookies);
    expect((await client.post('/api/auth/logout')).status).toBe(204);
    expect(client.cookies.size).toBe(0);
    client.cookies = stale;
    const res = await client.get('/api/auth/me');
    expectError(res, 401, 'UNAUTHENTICATED');
    expect(res.headers.getSetCookie().join()).toMatch(/board_session=;.*Max-Age=0/);
  });

  it('logout succeeds without any session, and twice', async () => {
    const c = new Client(srv.url);
    expect((await c.post('/api/auth/logout')).status).toBe(204);
    expect((await c.request('POST', '/api/auth/logout')).status).toBe(204);
  });
});

describe('Bearer or session authentication (GET /api/whoami)', () => {
  async function issueToken(
    accountId: string,
    over: { expiresAt?: number | null; revoked?: boolean } = {},
  ): Promise<string> {
    const secret = `agb_${unique('secret')}`;
    await srv.store.tokens.insert({
      _id: unique('tok'),
      version: 1,
      accountId,
      agentId: unique('agent'),
      secretHash: sha256(secret),
      prefix: secret.slice(0, 12),
      name: 'ci',
      scope: 'workspace',
      boardId: 'board-1',
      role: 'member',
      resources: null,
      expiresAt: over.expiresAt ?? null,
      lastUsedAt: null,
      revoked: over.revoked ?? false,
      createdAt: Date.now(),
    });
    return secret;
  }

  it('identifies a Bearer token with its agent principal and secret-free prefix, with the nine headers', async () => {
    const { accountId } = await signedUp(srv.url);
    const secret = await issueToken(accountId);
    const res = await new Client(srv.url).get('/api/whoami', {
      authorization: `Bearer ${secret}`,
      'x-service-principal': 'user:someone-else',
    });
    expect(res.status).toBe(200);
    expect(res.body.principal).toMatch(/^agent:agent_/);
    expect(res.body.token).toMatchObject({ scope: 'workspace', prefix: secret.slice(0, 12) });
    expect(res.text).not.toContain(secret);
    for (const p of ['', 'Request-', 'Write-']) {
      expect(Number(res.headers.get(`x-ratelimit-${p}limit`))).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers.get(`x-ratelimit-${p}remaining`))).toBeGreaterThanOrEqual(0);
      expect(Number(res.headers.get(`x-ratelimit-${p}reset`))).toBeGreaterThan(Date.now() / 1000);
    }
  });

  it('identifies a session user', async () => {
    const { client, accountId } = await signedUp(srv.url);
    const res = await client.get('/api/whoami');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ principal: `user:${accountId}`, token: null });
  });

  it('answers AUTH_REQUIRED, INVALID_SERVICE_TOKEN, EXPIRED_TOKEN and UNAUTHENTICATED as the credential says', async () => {
    const { accountId } = await signedUp(srv.url);
    const c = new Client(srv.url);
    expectError(await c.get('/api/whoami'), 401, 'AUTH_REQUIRED');
    expectError(await c.get('/api/whoami', { authorization: 'Bearer agb_unknown' }), 401, 'INVALID_SERVICE_TOKEN');
    expectError(await c.get('/api/whoami', { authorization: 'Basic abc' }), 401, 'INVALID_SERVICE_TOKEN');
    expectError(
      await c.get('/api/whoami', { authorization: `Bearer ${await issueToken(accountId, { revoked: true })}` }),
      401,
      'INVALID_SERVICE_TOKEN',
    );
    expectError(
      await c.get('/api/whoami', {
        authorization: `Bearer ${await issueToken(accountId, { expiresAt: Date.now() - 1 })}`,
      }),
      400,
      'EXPIRED_TOKEN',
    );
    expectError(await c.get('/api/whoami', { cookie: 'board_session=not-a-session' }), 401, 'UNAUTHENTICATED');
  });

  it('is never rate-denied', async () => {
    const { client } = await signedUp(srv.url);
    const statuses = await Promise.all(Array.from({ length: 30 }, () => client.get('/api/whoami')));
    expect(statuses.every((r) => r.status === 200)).toBe(true);
  });
});

describe('configurable body cap', () => {
  it('applies BODY_LIMIT_BYTES', async () => {
    const small = await startTestServer({ BODY_LIMIT_BYTES: '2048' });
    try {
      const c = new Client(small.url);
      expectError(await c.post('/api/auth/login', { email: 'x'.repeat(3000), password: 'p' }), 413, 'BODY_TOO_LARGE');
      expectError(
        await c.post('/api/auth/login', { email: 'x'.repeat(1500), password: 'p' }),
        401,
        'INVALID_CREDENTIALS',
      );
    } finally {
      await small.stop();
    }
  });
});
