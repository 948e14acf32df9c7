// A socket's second subscribe to a board it watches (merging more topics into its subscription)
// reads its credential and role again, as the first does (src/ws/access-checks.ts `current`): a
// token revoked or narrowed, or a member removed, since the first (with no notice heard, as on a
// node the bus did not reach) is never let into the merge until the once-a-minute revalidation.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { modify } from '../../store/ports/store.js';
import { newBoard } from '../support/board.js';
import { signedUp, startTestServer, type TestServer } from '../support/server.js';
import { openSocket, type TestSocket } from '../support/socket.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

/** What the socket answers a subscribe to the board with: the message's type (and reason), or its close. */
async function subscribing(socket: TestSocket, boardId: string, topics: string[]): Promise<unknown> {
  socket.send({ type: 'subscribe', boardId, topics });
  const answer = socket
    .next((m) => ['subscribed', 'unsubscribed', 'error'].includes(m.type as string), 3000)
    .then((m: { type: string; reason?: string }) =>
      m.reason === undefined ? m.type : { type: m.type, reason: m.reason },
    )
    .catch(() => 'no answer');
  return Promise.race([answer, socket.closed]);
}

/** An agent's socket subscribed to its board's activity, and its token's id. */
async function agentWatching() {
  const board = await newBoard(srv.url);
  const issued = await board.owner.post('/api/accounts/tokens', {
    name: 'watcher',
    scope: 'workspace',
    projectId: board.projectId,
    role: 'member',
  });
  expect(issued.status, issued.text).toBe(201);
  const socket = await openSocket(srv.url, { authorization: `Bearer ${issued.body.secret}` });
  expect(await subscribing(socket, board.projectId, ['activity'])).toBe('subscribed');
  return { board, socket, tokenId: issued.body.token.id as string };
}

it('closes the socket of a token revoked since its first subscribe', async () => {
  const { board, socket, tokenId } = await agentWatching();
  await modify(srv.store.tokens, tokenId, () => ({ revoked: true })); // no notice: as on a node the bus missed

  expect(await subscribing(socket, board.projectId, ['shouts']), 'a revoked token merged a subscribe').toEqual({
    code: 4001,
    reason: 'the credential was revoked',
  });
});

it('ends the subscription of a token narrowed since its first subscribe', async () => {
  const { board, socket, tokenId } = await agentWatching();
  await modify(srv.store.tokens, tokenId, () => ({ role: 'viewer' as const }));

  expect(await subscribing(socket, board.projectId, ['shouts']), 'a narrowed token merged a subscribe').toEqual({
    type: 'unsubscribed',
    reason: 'Your role on this board is now viewer; subscribe again.',
  });
  // Subscribed again, it is let in under its role as it stands.
  socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity', 'shouts'] });
  expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({ role: 'viewer' });
  socket.ws.close();
});

it('ends the subscription of a member removed since their first subscribe', async () => {
  const [owner, removed] = await Promise.all([signedUp(srv.url), signedUp(srv.url)]);
  const projectId = (await owner.client.get('/api/projects')).body.projects[0].projectId as string;
  const memberId = `${projectId}:${removed.accountId}`;
  await srv.store.members.insert({
    _id: memberId,
    version: 1,
    projectId,
    accountId: removed.accountId,
    role: 'member',
    acceptedAt: Date.now(),
  });
  const socket = await openSocket(srv.url, {
    cookie: [...removed.client.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
    origin: 'http://board.test',
  });
  expect(await subscribing(socket, projectId, ['activity'])).toBe('subscribed');
  await srv.store.members.delete(memberId); // no membership notice

  expect(await subscribing(socket, projectId, ['shouts']), 'a removed member merged a subscribe').toEqual({
    type: 'unsubscribed',
    reason: 'You are no longer a member of this board.',
  });
  socket.ws.close();
});
