// Service tokens over real HTTP: issue, list, update, revoke, reissue; scopes and expiry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';
import { until } from '../support/until.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

const bearer = (secret: string) => new Client(srv.url, { authorization: `Bearer ${secret}` });

async function owner() {
  const user = await signedUp(srv.url);
  const projectId = (await user.client.get('/api/account/profile')).body.projectId as string;
  return { ...user, projectId };
}

describe('issuing and listing', () => {
  it('shows the secret once, stores only its hash, and lists the secret-free prefix, scope, board and last use', async () => {
    const { client, projectId, accountId } = await owner();
    const res = await client.post('/api/accounts/tokens', { name: 'builder', scope: 'workspace', projectId });
    expect(res.status).toBe(201);
    const { token, secret } = res.body;
    expect(secret).toMatch(/^agb_[\w-]{40}$/);
    expect(token).toMatchObject({
      name: 'builder',
      scope: 'workspace',
      projectId,
      role: 'member',
      resources: null,
      expiresAt: null,
      lastUsedAt: null,
      prefix: secret.slice(0, 12),
    });
    expect(JSON.stringify(await srv.store.tokens.find({ accountId }))).not.toContain(secret);

    const listed = await client.get('/api/accounts/tokens');
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(secret);
    expect(listed.body.tokens).toEqual([token]);

    const me = await bearer(secret).get('/api/whoami');
    expect(me.body).toMatchObject({
      principal: `agent:${token.agentId}`,
      workspace: { projectId },
      token: { scope: 'workspace', prefix: token.prefix },
    });
    await until(async () => Boolean((await client.get('/api/accounts/tokens')).body.tokens[0].lastUsedAt), {
      timeout: 1000,
      what: 'the token’s last use written',
    });
    expect((await client.get('/api/accounts/tokens')).body.tokens[0].lastUsedAt).toEqual(expect.any(String));
  });

  it('issues account and resource tokens, checking what each scope takes', async () => {
    const { client, projectId } = await owner();
    const account = await client.post('/api/accounts/tokens', { name: 'ops', scope: 'account' });
    expect(account.body.token).toMatchObject({ scope: 'account', projectId: null, role: null });
    expect((await bearer(account.body.secret).get('/api/whoami')).body.account.email).toEqual(expect.any(String));
    const resource = await client.post('/api/accounts/tokens', {
      name: 'narrow',
      scope: 'resource',
      projectId,
      resources: ['W-1', 'shouts', 'W-1'],
    });
    expect(resource.body.token).toMatchObject({ scope: 'resource', resources: ['W-1', 'shouts'] });
    expectError(
      await client.post('/api/accounts/tokens', { name: 'x', scope: 'resource', projectId }),
      400,
      'INVALID_INPUT',
    );
    expectError(
      await client.post('/api/accounts/tokens', { name: 'x', scope: 'resource', projectId, resources: ['rm -rf'] }),
      400,
      'INVALID_INPUT',
    );
    expectError(await client.post('/api/accounts/tokens', { name: 'x', scope: 'workspace' }), 400, 'INVALID_INPUT');
    expectError(
      await client.post('/api/accounts/tokens', { name: 'x', scope: 'account', projectId }),
      400,
      'INVALID_INPUT',
    );
    expectError(await client.post('/api/accounts/tokens', { name: 'x', scope: 'galaxy' }), 400, 'INVALID_INPUT');
  });

  it('binds board tokens only to boards the issuer administers, never above the issuer’s role', async () => {
    const alice = await owner();
    const bob = await owner();
    expectError(
      await alice.client.post('/api/accounts/tokens', { name: 'x', scope: 'workspace', projectId: bob.projectId }),
      403,
      'PROJECT_SCOPE_DENIED',
    );
    // Bob shares his board with Alice as a member (sharing arrives with its own issue; the membership is what counts).
    await srv.store.members.insert({
      _id: `${bob.projectId}:${alice.accountId}`,
      version: 1,
      projectId: bob.projectId,
      accountId: alice.accountId,
      role: 'member',
      acceptedAt: Date.now(),
    });
    expectError(
      await alice.client.post('/api/accounts/tokens', { name: 'x', scope: 'workspace', projectId: bob.projectId }),
      403,
      'ROLE_REQUIRED',
    );
    expect(
      (
        await bob.client.post('/api/accounts/tokens', {
          name: 'admin agent',
          scope: 'workspace',
          projectId: bob.projectId,
          role: 'admin',
        })
      ).status,
    ).toBe(201);
  });

  it('refuses workspace and resource tokens on account structure, and needs some credential', async () => {
    const { client, projectId } = await owner();
    const ws = (await client.post('/api/accounts/tokens', { name: 'w', scope: 'workspace', projectId })).body.secret;
    expectError(await bearer(ws).get('/api/accounts/tokens'), 403, 'PROJECT_SCOPE_DENIED');
    expectError(
      await bearer(ws).post('/api/accounts/tokens', { name: 'escalate', scope: 'account' }),
      403,
      'PROJECT_SCOPE_DENIED',
    );
    expectError(await new Client(srv.url).get('/api/accounts/tokens'), 401, 'UNAUTHENTICATED');
    const acct = (await client.post('/api/accounts/tokens', { name: 'a', scope: 'account' })).body.secret;
    // An account token lists what it issued (the hardening issue: a token manages only its own issue).
    expect((await bearer(acct).get('/api/accounts/tokens')).body.tokens).toHaveLength(0);
    expect(
      (await bearer(acct).post('/api/accounts/tokens', { name: 'child', scope: 'workspace', projectId })).status,
    ).toBe(201);
    expect((await bearer(acct).get('/api/accounts/tokens')).body.tokens.map((t: { name: string }) => t.name)).toEqual([
      'child',
    ]);
  });
});

describe('expiry, update, revoke, reissue', () => {
  it('answers EXPIRED_TOKEN after expiry, and PATCH can extend or clear it', async () => {
    const { client, projectId } = await owner();
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const { token, secret } = (
      await client.post('/api/accounts/tokens', { name: 'short', scope: 'workspace', projectId, expiresAt })
    ).body;
    expect(token.expiresAt).toBe(expiresAt);
    expect((await bearer(secret).get('/api/whoami')).status).toBe(200);
    srv.advance(61_000);
    expectError(await bearer(secret).get('/api/whoami'), 400, 'EXPIRED_TOKEN');
    const patched = await client.request('PATCH', `/api/accounts/tokens/${token.id}`, {
      json: { name: 'long', expiresAt: null },
    });
    expect(patched.body.token).toMatchObject({ name: 'long', expiresAt: null });
    expect((await bearer(secret).get('/api/whoami')).status).toBe(200);
    expectError(
      await client.request('PATCH', `/api/accounts/tokens/${token.id}`, {
        json: { expiresAt: '2001-01-01T00:00:00Z' },
      }),
      400,
      'INVALID_INPUT',
    );
    expectError(
      await client.request('PATCH', `/api/accounts/tokens/${token.id}`, { json: { secret: 'x' } }),
      400,
      'INVALID_INPUT',
    );
  });

  it('reissues a new secret for the same agent; the old secret stops working at once', async () => {
    const { client, projectId } = await owner();
    const first = (await client.post('/api/accounts/tokens', { name: 'agent', scope: 'workspace', projectId })).body;
    const again = await client.post(`/api/accounts/tokens/${first.token.id}/reissue`);
    expect(again.status).toBe(200);
    expect(again.body.secret).not.toBe(first.secret);
    expect(again.body.token).toMatchObject({ id: first.token.id, agentId: first.token.agentId });
    expect(again.body.token.prefix).not.toBe(first.token.prefix);
    expectError(await bearer(first.secret).get('/api/whoami'), 401, 'INVALID_SERVICE_TOKEN');
    expect((await bearer(again.body.secret).get('/api/whoami')).body.principal).toBe(`agent:${first.token.agentId}`);
  });

  it('revokes at once, and answers TOKEN_NOT_FOUND for another account’s or a revoked token', async () => {
    const alice = await owner();
    const bob = await owner();
    const { token, secret } = (
      await alice.client.post('/api/accounts/tokens', { name: 'gone', scope: 'workspace', projectId: alice.projectId })
    ).body;
    expectError(await bob.client.request('DELETE', `/api/accounts/tokens/${token.id}`), 404, 'TOKEN_NOT_FOUND');
    expectError(await bob.client.post(`/api/accounts/tokens/${token.id}/reissue`), 404, 'TOKEN_NOT_FOUND');
    expect((await alice.client.request('DELETE', `/api/accounts/tokens/${token.id}`)).status).toBe(204);
    expectError(await bearer(secret).get('/api/whoami'), 401, 'INVALID_SERVICE_TOKEN');
    expectError(await alice.client.request('DELETE', `/api/accounts/tokens/${token.id}`), 404, 'TOKEN_NOT_FOUND');
    expect((await alice.client.get('/api/accounts/tokens')).body.tokens).toEqual([]);
  });
});
