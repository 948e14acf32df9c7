// A token may not outlive or widen the credential that made it, and manages only the tokens it
// issued (hardening issue), over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';
import { holdTokens } from '../support/onboarding.js';
import { unique } from '../support/temp.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

const DAY = 24 * 3600 * 1000;
const inDays = (n: number) => new Date(Date.now() + n * DAY).toISOString();

async function accountToken(
  issuer: Client,
  expiresAt: string | null,
): Promise<{ id: string; client: Client; expiresAt: string | null }> {
  const res = await issuer.post('/api/accounts/tokens', { name: unique('acct'), scope: 'account', expiresAt });
  expect(res.status, res.text).toBe(201);
  return {
    id: res.body.token.id,
    client: new Client(srv.url, { authorization: `Bearer ${res.body.secret}` }),
    expiresAt: res.body.token.expiresAt,
  };
}

describe('a token acting on tokens', () => {
  it('cannot extend its own expiry or otherwise change itself', async () => {
    const { client: owner } = await signedUp(srv.url);
    const a = await accountToken(owner, inDays(1));
    expectError(
      await a.client.request('PATCH', `/api/accounts/tokens/${a.id}`, { json: { expiresAt: null } }),
      403,
      'TOKEN_SCOPE_EXCEEDED',
    );
    expectError(
      await a.client.request('PATCH', `/api/accounts/tokens/${a.id}`, { json: { expiresAt: inDays(30) } }),
      403,
      'TOKEN_SCOPE_EXCEEDED',
    );
    expectError(await a.client.post(`/api/accounts/tokens/${a.id}/reissue`), 403, 'TOKEN_SCOPE_EXCEEDED');
    const listed = (await owner.get('/api/accounts/tokens')).body.tokens.find((t: { id: string }) => t.id === a.id);
    expect(listed.expiresAt).toBe(a.expiresAt);
    expect((await a.client.get('/api/whoami')).status).toBe(200); // still its old self
  });

  it('cannot mint a token that outlives it; without an expiry the new one expires with it', async () => {
    const { client: owner } = await signedUp(srv.url);
    const a = await accountToken(owner, inDays(1));
    expectError(
      await a.client.post('/api/accounts/tokens', { name: 'forever', scope: 'account', expiresAt: null }),
      403,
      'TOKEN_SCOPE_EXCEEDED',
    );
    expectError(
      await a.client.post('/api/accounts/tokens', { name: 'longer', scope: 'account', expiresAt: inDays(2) }),
      403,
      'TOKEN_SCOPE_EXCEEDED',
    );
    const defaulted = await a.client.post('/api/accounts/tokens', { name: 'defaulted', scope: 'account' });
    expect(defaulted.status).toBe(201);
    expect(defaulted.body.token.expiresAt).toBe(a.expiresAt);
    const shorter = await a.client.post('/api/accounts/tokens', {
      name: 'shorter',
      scope: 'account',
      expiresAt: inDays(0.5),
    });
    expect(shorter.status).toBe(201);
    // And what it minted cannot be stretched past it either.
    expectError(
      await a.client.request('PATCH', `/api/accounts/tokens/${shorter.body.token.id}`, {
        json: { expiresAt: inDays(3) },
      }),
      403,
      'TOKEN_SCOPE_EXCEEDED',
    );
    expect(
      (
        await a.client.request('PATCH', `/api/accounts/tokens/${shorter.body.token.id}`, {
          json: { expiresAt: inDays(0.75) },
        })
      ).status,
    ).toBe(200);
    // A session is not bounded by any token.
    expect(
      (await owner.request('PATCH', `/api/accounts/tokens/${shorter.body.token.id}`, { json: { expiresAt: null } }))
        .status,
    ).toBe(200);
  });

  it('manages only the tokens it issued: the owner’s other tokens are out of its reach', async () => {
    const { client: owner } = await signedUp(srv.url);
    const a = await accountToken(owner, null);
    const b = await accountToken(owner, null);
    expectError(await a.client.request('DELETE', `/api/accounts/tokens/${b.id}`), 403, 'TOKEN_SCOPE_EXCEEDED');
    expectError(
      await a.client.request('PATCH', `/api/accounts/tokens/${b.id}`, { json: { name: 'renamed' } }),
      403,
      'TOKEN_SCOPE_EXCEEDED',
    );
    expectError(await a.client.post(`/api/accounts/tokens/${b.id}/reissue`), 403, 'TOKEN_SCOPE_EXCEEDED');
    expect((await b.client.get('/api/whoami')).status).toBe(200);
    const child = await accountToken(a.client, null);
    expect((await a.client.get('/api/accounts/tokens')).body.tokens.map((t: { id: string }) => t.id)).toEqual([
      child.id,
    ]);
    expect((await owner.get('/api/accounts/tokens')).body.tokens).toHaveLength(3);
    expect((await a.client.request('DELETE', `/api/accounts/tokens/${child.id}`)).status).toBe(204);
    expect((await child.client.get('/api/whoami')).status).toBe(401);
    // It may end itself.
    expect((await a.client.request('DELETE', `/api/accounts/tokens/${a.id}`)).status).toBe(204);
    expect((await a.client.get('/api/whoami')).status).toBe(401);
  });
});

describe('the tokens an account holds', () => {
  it('are at most 500; a revoked one frees its room, its record let go then; an expired one keeps both until revoked', async () => {
    const { client: owner, accountId } = await signedUp(srv.url);
    await holdTokens(srv.store, accountId, 498);
    const revoked = await accountToken(owner, null);
    const expired = await accountToken(owner, null);
    const issue = (name: string) => owner.post('/api/accounts/tokens', { name, scope: 'account' });
    const refused = await issue('one too many');
    expectError(refused, 400, 'INVALID_INPUT');
    expect(refused.body.error.message).toMatch(/at most 500/);

    expect((await owner.request('DELETE', `/api/accounts/tokens/${revoked.id}`)).status).toBe(204);
    const afterRevoke = await issue('in its room');
    expect(afterRevoke.status, afterRevoke.text).toBe(201);
    expect(await srv.store.tokens.get(revoked.id)).toBeNull();
    expectError(await revoked.client.get('/api/whoami'), 401, 'INVALID_SERVICE_TOKEN');

    // Expired: it still says so (the contract's EXPIRED_TOKEN), and holds its room until revoked.
    const held = (await srv.store.tokens.get(expired.id))!;
    await srv.store.tokens.update(held._id, held.version, { expiresAt: Date.now() - 1000 });
    expectError(await issue('not yet'), 400, 'INVALID_INPUT');
    expectError(await expired.client.get('/api/whoami'), 400, 'EXPIRED_TOKEN');
    expect((await owner.request('DELETE', `/api/accounts/tokens/${expired.id}`)).status).toBe(204);
    const afterExpiry = await issue('in its room too');
    expect(afterExpiry.status, afterExpiry.text).toBe(201);
    expect(await srv.store.tokens.count({ accountId })).toBe(500);
  });
});
