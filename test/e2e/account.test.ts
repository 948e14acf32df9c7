// The signed-in account over real HTTP: profile and project selection, email change, deletion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';
import { unique } from '../support/temp.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

describe('GET/PATCH /api/account/profile', () => {
  it('answers with the email, display name and the selected project’s plan metadata', async () => {
    const { client, email } = await signedUp(srv.url);
    const res = await client.get('/api/account/profile');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      email,
      displayName: null,
      defaultProjectId: res.body.projectId,
      projectId: expect.any(String),
      plan: { name: 'free', boardLimit: 3, verificationIncluded: true, historyRetentionDays: 7, rewind: false },
    });
  });

  it('sets and clears the display name and the default project independently', async () => {
    const { client } = await signedUp(srv.url);
    const defaultId = (await client.get('/api/account/profile')).body.projectId;
    const set = await client.request('PATCH', '/api/account/profile', { json: { displayName: '  Ada  ' } });
    expect(set.body).toMatchObject({ displayName: 'Ada', defaultProjectId: defaultId });
    const second = (await client.post('/api/projects', { name: 'Second' })).body.projectId;
    const moved = await client.request('PATCH', '/api/account/profile', { json: { defaultProjectId: second } });
    expect(moved.body).toMatchObject({ displayName: 'Ada', defaultProjectId: second });
    const cleared = await client.request('PATCH', '/api/account/profile', { json: { displayName: null } });
    expect(cleared.body).toMatchObject({ displayName: null, defaultProjectId: second });
    expect((await client.get('/api/auth/me')).body.user.displayName).toBeNull();
  });

  it('refuses a display name over 80 characters, a malformed or unreachable default project, and unknown fields', async () => {
    const { client } = await signedUp(srv.url);
    const other = await signedUp(srv.url);
    const othersProject = (await other.client.get('/api/account/profile')).body.projectId;
    const patch = (json: unknown) => client.request('PATCH', '/api/account/profile', { json });
    expectError(await patch({ displayName: 'x'.repeat(81) }), 400, 'INVALID_DISPLAY_NAME');
    expect((await patch({ displayName: 'x'.repeat(80) })).status).toBe(200);
    expectError(await patch({ defaultProjectId: '' }), 400, 'INVALID_PROJECT_ID');
    expectError(await patch({ defaultProjectId: 'not/an id' }), 400, 'INVALID_PROJECT_ID');
    expectError(await patch({ defaultProjectId: othersProject }), 403, 'PROJECT_SCOPE_DENIED');
    expectError(await patch({ displayName: 42 }), 400, 'INVALID_INPUT');
    expectError(await patch({ nickname: 'x' }), 400, 'INVALID_INPUT');
  });

  it('selects the project from ?projectId=, else the starred default, else answers PROJECT_REQUIRED', async () => {
    const { client } = await signedUp(srv.url);
    const other = await signedUp(srv.url);
    const first = (await client.get('/api/account/profile')).body.projectId;
    const second = (await client.post('/api/projects', { name: 'Elsewhere' })).body.projectId;
    expect((await client.get(`/api/account/profile?projectId=${second}`)).body.projectId).toBe(second);
    expectError(await client.get('/api/account/profile?projectId=bad%20id'), 400, 'INVALID_PROJECT_ID');
    expectError(await client.get('/api/account/profile?projectId='), 400, 'INVALID_PROJECT_ID');
    expectError(
      await client.get(
        `/api/account/profile?projectId=${(await other.client.get('/api/account/profile')).body.projectId}`,
      ),
      403,
      'PROJECT_SCOPE_DENIED',
    );
    await client.request('PATCH', '/api/account/profile', { json: { defaultProjectId: null } });
    expectError(await client.get('/api/account/profile'), 409, 'PROJECT_REQUIRED');
    expect((await client.get(`/api/account/profile?projectId=${first}`)).status).toBe(200);
  });

  it('needs a session', async () => {
    expectError(await new Client(srv.url).get('/api/account/profile'), 401, 'UNAUTHENTICATED');
  });
});

describe('POST /api/account/email', () => {
  it('re-authenticates, canonicalises, revokes prior sessions, issues a fresh cookie and mails a verification', async () => {
    const user = await signedUp(srv.url);
    const elsewhere = new Client(srv.url);
    await elsewhere.post('/api/auth/login', { email: user.email, password: user.password });
    const newEmail = `${unique('New')}@Example.COM`;
    const before = user.client.cookies.get('board_session');
    const res = await user.client.post('/api/account/email', {
      currentPassword: user.password,
      newEmail: `  ${newEmail} `,
    });
    expect(res.status).toBe(200);
    expect(res.body.account).toMatchObject({ email: newEmail.toLowerCase(), emailVerified: false });
    expect(user.client.cookies.get('board_session')).not.toBe(before);
    expect((await user.client.get('/api/auth/me')).status).toBe(200);
    expectError(await elsewhere.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    const mail = await srv.mail.next(newEmail.toLowerCase(), /Verify/);
    expect(mail.text).toContain('http://board.test/verify-email#token=');
    expect(
      (await new Client(srv.url).post('/api/auth/login', { email: newEmail, password: user.password })).status,
    ).toBe(200);
  });

  it('answers INVALID_CURRENT_PASSWORD, INVALID_EMAIL and EMAIL_TAKEN, changing nothing', async () => {
    const user = await signedUp(srv.url);
    const other = await signedUp(srv.url);
    expectError(
      await user.client.post('/api/account/email', {
        currentPassword: 'wrong password 000',
        newEmail: `${unique('x')}@example.com`,
      }),
      401,
      'INVALID_CURRENT_PASSWORD',
    );
    expectError(
      await user.client.post('/api/account/email', { currentPassword: user.password, newEmail: 'nope' }),
      400,
      'INVALID_EMAIL',
    );
    expectError(
      await user.client.post('/api/account/email', {
        currentPassword: user.password,
        newEmail: other.email.toUpperCase(),
      }),
      409,
      'EMAIL_TAKEN',
    );
    expect((await user.client.get('/api/auth/me')).body.user.email).toBe(user.email);
  });
});

describe('DELETE /api/account', () => {
  it('needs the exact email and the current password, then closes the account (kept 30 days) and the sweep removes it, its boards, tokens and sessions', async () => {
    const user = await signedUp(srv.url);
    const projectId = (await user.client.get('/api/account/profile')).body.projectId;
    const issued = await user.client.post('/api/accounts/tokens', { name: 'agent', scope: 'workspace', projectId });
    expect(issued.status).toBe(201);
    const del = (json: unknown) => user.client.request('DELETE', '/api/account', { json });
    expectError(
      await del({ confirmEmail: user.email.toUpperCase(), currentPassword: user.password }),
      400,
      'ACCOUNT_DELETE_CONFIRM_MISMATCH',
    );
    expectError(
      await del({ confirmEmail: user.email, currentPassword: 'wrong password 000' }),
      401,
      'INVALID_CURRENT_PASSWORD',
    );
    expect((await user.client.get('/api/auth/me')).status).toBe(200);

    const res = await del({ confirmEmail: user.email, currentPassword: user.password });
    expect(res.status).toBe(204);
    expect(user.client.cookies.size).toBe(0);
    expectError(
      await new Client(srv.url).post('/api/auth/login', { email: user.email, password: user.password }),
      403,
      'ACCOUNT_DELETED',
    );
    expectError(
      await new Client(srv.url).post('/api/auth/login', { email: user.email, password: 'wrong password 000' }),
      401,
      'INVALID_CREDENTIALS',
    );
    expectError(
      await new Client(srv.url).get('/api/whoami', { authorization: `Bearer ${issued.body.secret}` }),
      401,
      'INVALID_SERVICE_TOKEN',
    );
    // Kept for 30 days (an operator may restore it), its email still taken...
    expect(await srv.store.projects.get(projectId)).toMatchObject({ deletedOwner: user.accountId });
    expect(await srv.store.accounts.get(user.accountId)).toMatchObject({ deletedBy: 'owner' });
    expectError(
      await new Client(srv.url).post('/api/auth/signup', { email: user.email, password: user.password }),
      409,
      'EMAIL_TAKEN',
    );
    // ...then purged by the sweep (the last test here: the clock moves on for good).
    await srv.server.sweepDeleted();
    expect(await srv.store.accounts.get(user.accountId)).not.toBeNull();
    srv.advance(30 * 86_400_000 + 1000);
    expect((await srv.server.sweepDeleted()).accounts).toContain(user.accountId);
    expect(await srv.store.accounts.get(user.accountId)).toBeNull();
    expect(await srv.store.projects.get(projectId)).toBeNull();
    expect(await srv.store.boards.get(projectId)).toBeNull();
    expect(await srv.store.tokens.get(issued.body.token.id)).toBeNull();
    expect(
      (await new Client(srv.url).post('/api/auth/signup', { email: user.email, password: user.password })).status,
    ).toBe(201);
  });
});
