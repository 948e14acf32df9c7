// A socket's subscribe reads its credential afresh (src/ws/access-checks.ts `current`): a token for
// revocation, role and expiry, a session for revocation and expiry. Once the credential has ended,
// REST refuses it (a token 400 EXPIRED_TOKEN, a session 401) and the socket it opened before is
// closed at its next subscribe as revalidation would close it, never let in until the
// once-a-minute revalidation happens to close it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';
import { openSocket, type TestSocket } from '../support/socket.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

/** What the socket answers a subscribe to the board with: a message, or its close. */
async function subscribing(socket: TestSocket, boardId: string): Promise<unknown> {
  socket.send({ type: 'subscribe', boardId, topics: ['activity'] });
  const answer = socket
    .next((m) => m.type === 'subscribed' || m.type === 'error', 3000)
    .then((m: { type: string }) => m.type)
    .catch(() => 'no answer');
  return Promise.race([answer, socket.closed]);
}

it('refuses a subscribe with an expired token as REST refuses its requests', async () => {
  const board = await newBoard(srv.url);
  const issued = await board.owner.post('/api/accounts/tokens', {
    name: 'short-lived',
    scope: 'workspace',
    projectId: board.projectId,
    expiresAt: new Date(srv.now() + 60_000).toISOString(),
  });
  expect(issued.status, issued.text).toBe(201);
  const bearer = { authorization: `Bearer ${issued.body.secret}` };
  const agent = new Client(srv.url, bearer);
  expect((await agent.get('/api/status')).status).toBe(200);
  const socket = await openSocket(srv.url, bearer);

  srv.advance(120_000); // the token expired a minute ago
  expectError(await agent.get('/api/status'), 400, 'EXPIRED_TOKEN'); // contract Part 7: 400

  expect(await subscribing(socket, board.projectId), 'an expired token’s socket subscribed to the board').toEqual({
    code: 4001,
    reason: 'the credential was revoked',
  });
});

it('refuses a subscribe with a session that expired or was revoked unheard', async () => {
  const expiring = await newBoard(srv.url);
  const revoked = await newBoard(srv.url);
  const cookieOf = (client: Client) => ({
    cookie: `board_session=${client.cookies.get('board_session')}`,
    origin: 'http://board.test',
  });
  const expiringSocket = await openSocket(srv.url, cookieOf(expiring.owner));
  const revokedSocket = await openSocket(srv.url, cookieOf(revoked.owner));
  expect(await subscribing(revokedSocket, revoked.projectId)).toBe('subscribed');

  // The session's row goes with no notice (as on a node that did not hear it), and the other one lapses.
  const accountId = (await revoked.owner.get('/api/auth/me')).body.user.id as string;
  expect(await srv.store.sessions.deleteMany({ accountId })).toBe(1);
  srv.advance(31 * 24 * 3600_000);
  expect((await expiring.owner.get('/api/projects')).status).toBe(401);

  const closed = { code: 4001, reason: 'the credential was revoked' };
  expect(await subscribing(expiringSocket, expiring.projectId), 'an expired session subscribed').toEqual(closed);
  revokedSocket.send({ type: 'unsubscribe', boardId: revoked.projectId });
  expect(await subscribing(revokedSocket, revoked.projectId), 'a revoked session subscribed').toEqual(closed);
});
