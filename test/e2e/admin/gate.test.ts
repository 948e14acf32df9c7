// The operator gate (DOMAIN.md "Operators"): /api/admin answers an operator's own session only.
// A token (even one an operator issued), another account's session, no credential, a bad body or
// a session of an account not named in OPERATOR_EMAILS gets exactly what an unknown path gets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, signedUp, startTestServer, type TestServer } from '../../support/server.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';

describe('the operator gate', () => {
  let srv: TestServer;
  const opEmail = operatorEmail();
  beforeAll(async () => {
    srv = await startTestServer({ OPERATOR_EMAILS: ` ${opEmail.toUpperCase()} , someone-else@ops.example.com` });
  });
  afterAll(() => srv.stop());

  /** A response's body with its request id taken out: what an observer could tell apart. */
  const shape = (res: { status: number; body: { error?: Record<string, unknown> } }) => ({
    status: res.status,
    error: { ...res.body.error, requestId: undefined },
  });

  it('lets an operator session in', async () => {
    const op = await confirmedOperator(srv, opEmail);
    const res = await op.client.get('/api/admin/codebase');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      name: expect.any(String),
      node: process.version,
      store: 'embedded',
      bus: 'local',
      nodeId: expect.any(String),
    });
    expect(res.body.configuration.secretKey).toBe(null);
    expect(JSON.stringify(res.body)).not.toContain('test-secret-key');
  });

  it('answers everyone else exactly as an unknown path', async () => {
    const unknown = shape(await new Client(srv.url).get('/api/admin/no-such-route'));
    expect(unknown.status).toBe(404);
    expect(unknown.error).toMatchObject({ code: 'NOT_FOUND' });

    const person = await signedUp(srv.url);
    const token = await person.client.post('/api/accounts/tokens', { name: 'agent', scope: 'account' });
    expect(token.status, token.text).toBe(201);
    const op = await confirmedOperator(srv, opEmail.replace('@', '+2@'));
    const opLogin = new Client(srv.url);
    expect((await opLogin.post('/api/auth/login', { email: opEmail, password: 'operator password 123' })).status).toBe(
      200,
    );
    const opToken = await opLogin.post('/api/accounts/tokens', { name: 'ops agent', scope: 'account' });
    expect(opToken.status, opToken.text).toBe(201);

    const refused = [
      await new Client(srv.url).get('/api/admin/codebase'), // no credential
      await person.client.get('/api/admin/codebase'), // another account's session
      await op.client.get('/api/admin/codebase'), // an account not named in OPERATOR_EMAILS
      await new Client(srv.url, { authorization: `Bearer ${token.body.secret}` }).get('/api/admin/codebase'), // a token
      await new Client(srv.url, { authorization: `Bearer ${opToken.body.secret}` }).get('/api/admin/codebase'), // an operator's token
      await opLogin.get('/api/admin/codebase', { authorization: `Bearer ${opToken.body.secret}` }), // an operator's session beside a token
      await new Client(srv.url, { cookie: 'board_session=forged' }).get('/api/admin/codebase'), // a forged cookie
    ];
    for (const res of refused) expect(shape(res)).toEqual(unknown);
    expect(refused.every((r) => r.headers.get('content-type') === refused[0]!.headers.get('content-type'))).toBe(true);
  });

  it('has its own budget, apart from any board’s: 600 requests a minute per operator', async () => {
    const fresh = await confirmedOperator(srv, 'someone-else@ops.example.com');
    const notOperator = await confirmedOperator(srv, opEmail.replace('@', '+budget@'));
    const statuses: number[] = [];
    srv.holdBudgets();
    for (let i = 0; i < 601; i++) statuses.push((await fresh.client.get('/api/admin/codebase')).status);
    expect(statuses.slice(0, 600).every((s) => s === 200)).toBe(true);
    const refused = await fresh.client.get('/api/admin/codebase');
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    // Not an operator: still the unknown path, budget or not.
    expect((await notOperator.client.get('/api/admin/codebase')).status).toBe(404);
  }, 60_000);
});
