// While an operator acts as an account, whatever "changes who can act" is refused 403
// IMPERSONATION_FORBIDDEN (DOMAIN.md "Operators"), enrollment codes and device approvals among it.
// So is the claim nonce of an anonymous board (a link that hands the whole board, its agents'
// tokens included, to whoever opens it): else an operator impersonating the anonymous account
// mints one, ends the impersonation and takes the board over as themselves.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { Client, startTestServer, type TestServer } from '../../support/server.js';

const OPERATOR = operatorEmail();
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ OPERATOR_EMAILS: OPERATOR });
});
afterAll(async () => {
  await srv.stop();
});

it('refuses an operator acting as an anonymous account the board’s takeover link', async () => {
  const provisioned = await new Client(srv.url).post('/api/accounts/anon-provision', { projectName: 'Night shift' });
  expect(provisioned.status, provisioned.text).toBe(201);
  const { projectId, accountId } = provisioned.body as { projectId: string; accountId: string };

  const op = await confirmedOperator(srv, OPERATOR);
  const started = await op.client.post(`/api/admin/users/${accountId}/impersonate`, { reason: 'support ticket 9' });
  expect(started.status, started.text).toBe(201);

  const minted = await op.client.post(`/api/projects/${projectId}/claim-nonce`);
  expect(minted.headers.get('x-impersonated-by')).toBe(op.accountId);
  if (minted.status === 201) {
    // What the link lets the operator do once back in their own session: take the board over.
    const ended = await op.client.post('/api/admin/impersonation/end', undefined, {
      'x-csrf-token': started.body.operatorCsrfToken,
    });
    expect(ended.status, ended.text).toBe(200);
    expect((await op.client.get('/api/auth/me')).body.user.id).toBe(op.accountId);
    const claimed = await op.client.post(`/api/projects/${projectId}/claim`, { nonce: minted.body.nonce });
    expect(claimed.status, claimed.text).toBe(200);
  }
  const owner = (await srv.store.projects.get(projectId))!.ownerId;
  expect(
    { mint: minted.status, code: minted.body?.error?.code ?? null, ownerIsOperator: owner === op.accountId },
    'an impersonation session minted the link that hands the board over',
  ).toEqual({ mint: 403, code: 'IMPERSONATION_FORBIDDEN', ownerIsOperator: false });
});
