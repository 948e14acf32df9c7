// Requirements of the accounts issue that were left out (hardening issue), over real HTTP:
// the signed double-submit CSRF token, the keyed password pre-hash, and strict UTF-8 bodies.
import bcrypt from 'bcrypt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfTokenFor } from '../../src/auth/csrf.js';
import { deriveKeys } from '../../src/auth/keys.js';
import { Client, signedUp, startTestServer, TEST_SECRET, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';
import { unique } from '../support/temp.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

/** A cookie write the test controls header by header: no automatic token. */
async function cookieWrite(client: Client, headers: Record<string, string>) {
  const bare = new Client(srv.url);
  bare.cookies = new Map(client.cookies);
  return bare.request('POST', '/api/projects', { json: { name: unique('csrf') }, headers });
}

describe('CSRF', () => {
  it('hands out the session’s token in every session response and in GET /api/auth/me', async () => {
    const { client, email, password } = await signedUp(srv.url);
    const signupToken = client.csrfToken;
    expect(signupToken).toMatch(/^[\w-]{43}$/);
    const me = await client.get('/api/auth/me');
    expect(me.body.csrfToken).toBe(signupToken);
    const login = await new Client(srv.url).post('/api/auth/login', { email, password });
    expect(login.status).toBe(200);
    expect(login.body.csrfToken).toMatch(/^[\w-]{43}$/);
    expect(login.body.csrfToken).not.toBe(signupToken); // bound to the session, and a login opens a new one
  });

  it('refuses a cookie write without the token, with a wrong one, or with another session’s, and takes the right one', async () => {
    const { client } = await signedUp(srv.url);
    const other = await signedUp(srv.url);
    expectError(await cookieWrite(client, {}), 403, 'CSRF_REJECTED');
    expectError(await cookieWrite(client, { 'x-csrf-token': 'A'.repeat(43) }), 403, 'CSRF_REJECTED');
    expectError(await cookieWrite(client, { 'x-csrf-token': other.client.csrfToken! }), 403, 'CSRF_REJECTED');
    expectError(await cookieWrite(client, { 'x-csrf-token': `${client.csrfToken!}x` }), 403, 'CSRF_REJECTED');
    expect((await client.get('/api/projects')).body.projects).toHaveLength(1); // nothing was created
    expect((await cookieWrite(client, { 'x-csrf-token': client.csrfToken! })).status).toBe(201);
  });

  it('is an HMAC of the session id under the server key, so it cannot be made up without the key', async () => {
    const { client } = await signedUp(srv.url);
    const sessionId = (await import('../../src/auth/authenticator.js')).sha256(client.cookies.get('board_session')!);
    expect(client.csrfToken).toBe(csrfTokenFor(deriveKeys(TEST_SECRET).csrf, sessionId));
    expect(client.csrfToken).not.toBe(csrfTokenFor(deriveKeys(`${TEST_SECRET}-other`).csrf, sessionId));
  });

  it('accepts only the configured origin: not one built from the Host header, and not a foreign Referer when Origin is absent', async () => {
    const { client } = await signedUp(srv.url);
    const token = { 'x-csrf-token': client.csrfToken! };
    const host = new URL(srv.url).host;
    expectError(await cookieWrite(client, { ...token, origin: `http://${host}` }), 403, 'CSRF_REJECTED');
    expectError(await cookieWrite(client, { ...token, referer: 'https://evil.example/page' }), 403, 'CSRF_REJECTED');
    expectError(await cookieWrite(client, { ...token, origin: 'null' }), 403, 'CSRF_REJECTED');
    expect((await cookieWrite(client, { ...token, referer: 'http://board.test/boards/x' })).status).toBe(201);
    expect((await cookieWrite(client, { ...token, origin: 'http://board.test' })).status).toBe(201);
  });

  it('needs no token for signup and login, but keeps their origin checks', async () => {
    const email = `${unique('origin')}@example.com`;
    const password = 'correct horse battery staple';
    expectError(
      await new Client(srv.url).post('/api/auth/signup', { email, password }, { origin: 'https://evil.example' }),
      403,
      'CSRF_REJECTED',
    );
    expect(
      (await new Client(srv.url).post('/api/auth/signup', { email, password }, { origin: 'http://board.test' })).status,
    ).toBe(201);
    expectError(
      await new Client(srv.url).post('/api/auth/login', { email, password }, { referer: 'https://evil.example/' }),
      403,
      'CSRF_REJECTED',
    );
    expect((await new Client(srv.url).post('/api/auth/login', { email, password })).status).toBe(200);
  });

  it('leaves Bearer calls without a cookie exempt', async () => {
    const { client } = await signedUp(srv.url);
    const issued = await client.post('/api/accounts/tokens', { name: unique('agent'), scope: 'account' });
    expect(issued.status).toBe(201);
    const bearer = new Client(srv.url, { authorization: `Bearer ${issued.body.secret}` });
    expect(
      (await bearer.post('/api/projects', { name: unique('bearer') }, { origin: 'https://evil.example' })).status,
    ).toBe(201);
  });
});

describe('passwords longer than bcrypt’s 72 bytes', () => {
  it('count every character: a shared 72-byte prefix does not sign in', async () => {
    const email = `${unique('long')}@example.com`;
    const password = `${'A'.repeat(72)}${'x'.repeat(28)}`;
    expect((await new Client(srv.url).post('/api/auth/signup', { email, password })).status).toBe(201);
    expectError(
      await new Client(srv.url).post('/api/auth/login', { email, password: `${'A'.repeat(72)}anything-else` }),
      401,
      'INVALID_CREDENTIALS',
    );
    expect((await new Client(srv.url).post('/api/auth/login', { email, password })).status).toBe(200);
  });

  it('count every emoji: 128 emoji do not share their first 18', async () => {
    const email = `${unique('emoji')}@example.com`;
    const password = '😀'.repeat(128);
    expect((await new Client(srv.url).post('/api/auth/signup', { email, password })).status).toBe(201);
    expectError(
      await new Client(srv.url).post('/api/auth/login', { email, password: `${'😀'.repeat(18)}${'🙃'.repeat(110)}` }),
      401,
      'INVALID_CREDENTIALS',
    );
    expect((await new Client(srv.url).post('/api/auth/login', { email, password })).status).toBe(200);
  });

  it('still verify a hash of the scheme before the pre-hash, and upgrade it at the next login', async () => {
    const { email, password, accountId } = await signedUp(srv.url);
    const stored = (await srv.store.accounts.get(accountId))!;
    expect(stored.passwordHash).toMatch(/^hmac-sha256\+bcrypt:\$2b\$04\$/);
    const legacy = await bcrypt.hash(password, 4); // what the accounts issue stored
    expect(await srv.store.accounts.update(accountId, stored.version, { passwordHash: legacy })).not.toBeNull();
    expect((await new Client(srv.url).post('/api/auth/login', { email, password })).status).toBe(200);
    const upgraded = (await srv.store.accounts.get(accountId))!.passwordHash;
    expect(upgraded).toMatch(/^hmac-sha256\+bcrypt:\$2b\$04\$/);
    expect((await new Client(srv.url).post('/api/auth/login', { email, password })).status).toBe(200);
    expectError(
      await new Client(srv.url).post('/api/auth/login', { email, password: `${password}!` }),
      401,
      'INVALID_CREDENTIALS',
    );
  });
});

describe('JSON bodies are UTF-8 or refused', () => {
  const signup = (raw: Buffer, contentType = 'application/json') =>
    new Client(srv.url).request('POST', '/api/auth/signup', { raw, headers: { 'content-type': contentType } });

  it('refuses invalid UTF-8 with 400 INVALID_JSON and creates nothing', async () => {
    const email = `${unique('utf8')}@example.com`;
    const body = Buffer.concat([
      Buffer.from(`{"email":"${email}","password":"correct horse bad`),
      Buffer.from([0xff]),
      Buffer.from('"}'),
    ]);
    expectError(await signup(body), 400, 'INVALID_JSON');
    expect(await srv.store.accounts.findOne({ email })).toBeNull();
  });

  it('refuses a lone surrogate escape in a string', async () => {
    const email = `${unique('surrogate')}@example.com`;
    expectError(
      await signup(Buffer.from(`{"email":"${email}","password":"correct horse \\ud800 battery"}`)),
      400,
      'INVALID_JSON',
    );
    expectError(
      await signup(Buffer.from(`{"email":"${email}","password":"correct horse \\udc00 battery"}`)),
      400,
      'INVALID_JSON',
    );
    expect(await srv.store.accounts.findOne({ email })).toBeNull();
    // A proper pair is fine.
    expect(
      (await signup(Buffer.from(`{"email":"${email}","password":"correct horse \\ud83d\\ude00 battery"}`))).status,
    ).toBe(201);
  });

  it('refuses a charset other than UTF-8', async () => {
    const email = `${unique('latin1')}@example.com`;
    const body = Buffer.from(`{"email":"${email}","password":"correct horse battery"}`);
    expectError(await signup(body, 'application/json; charset=iso-8859-1'), 400, 'INVALID_JSON');
    expect((await signup(body, 'application/json; charset=utf-8')).status).toBe(201);
  });
});
