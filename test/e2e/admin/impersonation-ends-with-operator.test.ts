// An impersonation session is bound to the operator's own session ("never past the operator's
// own session: acting as an account needs the operator signed in", src/admin/impersonation.ts):
// revoking that operator's account (every session and token of it, DOMAIN.md "Operators"), or
// signing the operator's own session out, ends the impersonation over REST and on its open socket;
// and it holds only while its operator is still one. Such an end is written down once, as the
// operator's own end is: one `admin.impersonation.end` row, by whatever notices it first.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { modify } from '../../../store/ports/store.js';
import { confirmedOperator, operatorEmail, signedUp } from '../../support/operators.js';
import { Client, startTestServer, type TestServer } from '../../support/server.js';
import { openSocket, type TestSocket } from '../../support/socket.js';
import { until } from '../../support/until.js';

const ROGUE = operatorEmail();
const GUARD = operatorEmail();
const LEAVING = operatorEmail();
const DEMOTED = operatorEmail();
const UNWATCHED = operatorEmail();
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ OPERATOR_EMAILS: [ROGUE, GUARD, LEAVING, DEMOTED, UNWATCHED].join(',') });
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
  return { ...operator, victim, started, socket };
}

/** The end rows of the impersonation of `accountId`, once one is written (and a moment for a second to show). */
async function endRows(accountId: string) {
  const rows = () => srv.store.audit.find({ action: 'admin.impersonation.end', target: `account:${accountId}` });
  await until(async () => (await rows()).length > 0, { what: 'the impersonation’s end row', timeout: 5000 });
  await new Promise((r) => setTimeout(r, 200));
  return rows();
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
  // Its end is written down once, presented again or not.
  expect((await rogue.client.get('/api/auth/me')).status).toBe(401);
  const rows = await endRows(rogue.victim.accountId);
  expect(rows).toEqual([
    expect.objectContaining({
      actor: `user:${rogue.accountId}`,
      data: expect.objectContaining({ automatic: true, cause: 'operator-session-ended', operator: true }),
    }),
  ]);
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
  expect(await endRows(leaving.victim.accountId)).toEqual([
    expect.objectContaining({
      data: expect.objectContaining({ automatic: true, cause: 'operator-session-ended', reason: 'support ticket 7' }),
    }),
  ]);
});

it('writes the end down when only the impersonation’s socket notices it (nothing presents the session again)', async () => {
  const unwatched = await impersonating(UNWATCHED);
  const own = new Client(srv.url);
  own.cookies.set('board_session', unwatched.client.cookies.get('board_operator_session')!);
  own.csrfToken = unwatched.started.body.operatorCsrfToken as string;
  expect((await own.post('/api/auth/logout')).status).toBe(204);
  expect(await unwatched.socket.closed).toEqual(ENDED.socket);
  expect(await endRows(unwatched.victim.accountId)).toEqual([
    expect.objectContaining({ data: expect.objectContaining({ automatic: true, cause: 'operator-session-ended' }) }),
  ]);
});

it('holds an impersonation only while its operator is still one', async () => {
  const demoted = await impersonating(DEMOTED);
  // The operator's address no longer confirmed (as after a change not followed yet): no operator now.
  await modify(srv.store.accounts, demoted.accountId, () => ({ emailVerified: false }));

  const me = await demoted.client.get('/api/auth/me');
  expect(me.status, 'an impersonation outlived its operator’s standing').toBe(401);
  // Its socket closes at once too, not at the next minute's recheck (answered waits 2 s).
  expect(await answered(demoted.client, demoted.socket), 'the socket outlived its operator’s standing').toEqual(ENDED);
  expect(await endRows(demoted.victim.accountId)).toEqual([
    expect.objectContaining({ data: expect.objectContaining({ automatic: true, cause: 'operator-role-lost' }) }),
  ]);
});
