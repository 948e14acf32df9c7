// An impersonation session is bound to the operator's own session ("never past the operator's
// own session: acting as an account needs the operator signed in", src/admin/impersonation.ts):
// revoking that operator's account (every session and token of it, DOMAIN.md "Operators"), or
// signing the operator's own session out, ends the impersonation over REST and on its open socket;
// and it holds only while its operator is still one.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { modify } from '../../../store/ports/store.js';
import { confirmedOperator, operatorEmail, signedUp } from '../../support/operators.js';
import { Client, startTestServer, type TestServer } from '../../support/server.js';
import { openSocket, type TestSocket } from '../../support/socket.js';

const ROGUE = operatorEmail();
const GUARD = operatorEmail();
const LEAVING = operatorEmail();
const DEMOTED = operatorEmail();
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ OPERATOR_EMAILS: [ROGUE, GUARD, LEAVING, DEMOTED].join(',') });
});
afterAll(async () => {
  await srv.stop();
});

/** `email`'s operator acting as a new account, with a socket open on the impersonation session. */
async function impersonating(email: string) {
  const operator = await confirmedOperator(srv, email);
  const victim = await signedUp(srv.url);
  const started = await operator.client.post(`/api/admin/users/${victim.accountId}/impersonate`, {
    reason: 'support ticket 7',
  });
  expect(started.status, started.text).toBe(201);
  // The operator's browser now holds the impersonation session in board_session.
  expect((await operator.client.get('/api/auth/me')).body.user.id).toBe(victim.accountId);
  const impersonationCookie = `board_session=${operator.client.cookies.get('board_session')}`;
  const socket = await openSocket(srv.url, { cookie: impersonationCookie, origin: 'http://board.test' });
  return { ...operator, started, socket };
}

/** What the impersonation session is answered now, over REST and on its socket. */
async function answered(client: Client, socket: TestSocket) {
  const me = await client.get('/api/auth/me');
  const projects = await client.get('/api/projects');
  const closed = await Promise.race([socket.closed, new Promise((r) => setTimeout(() => r('still open'), 2000))]);
  return { me: me.status, projects: projects.status, socket: closed };
}
const ENDED = { me: 401, projects: 401, socket: { code: 4001, reason: 'the credential was revoked' } };

it('ends an operator’s impersonation when the operator’s own account is revoked', async () => {
  const rogue = await impersonating(ROGUE);
  const guard = await confirmedOperator(srv, GUARD);

  // Another operator revokes the rogue operator's account: every session and token of it.
  const revoked = await guard.client.post(`/api/admin/users/${rogue.accountId}/revoke`, {
    reason: 'operator account compromised',
  });
  expect(revoked.status, revoked.text).toBe(200);

  // Acting as the account needs the operator signed in: with the operator's sessions gone, so is this one.
  expect(await answered(rogue.client, rogue.socket), 'the impersonation outlived the operator').toEqual(ENDED);
});

it('ends an operator’s impersonation when the operator’s own session signs out', async () => {
  const leaving = await impersonating(LEAVING);
  const own = new Client(srv.url);
  own.cookies.set('board_session', leaving.client.cookies.get('board_operator_session')!);
  own.csrfToken = leaving.started.body.operatorCsrfToken as string;
  expect((await own.post('/api/auth/logout')).status).toBe(204);

  expect(await answered(leaving.client, leaving.socket), 'the impersonation outlived the operator’s session').toEqual(
    ENDED,
  );
});

it('holds an impersonation only while its operator is still one', async () => {
  const demoted = await impersonating(DEMOTED);
  // The operator's address no longer confirmed (as after a change not followed yet): no operator now.
  await modify(srv.store.accounts, demoted.accountId, () => ({ emailVerified: false }));

  const me = await demoted.client.get('/api/auth/me');
  expect(me.status, 'an impersonation outlived its operator’s standing').toBe(401);
  demoted.socket.ws.close();
});
