// Two nodes on one store and one Redis: a member's role lowered or membership ended on one node
// unsubscribes their sockets on the other, closes their board tokens' sockets there, and the
// other node's next request already sees the change.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { twoNodesOnRedis, type RedisNodes } from '../support/redis-nodes.js';
import { CaptureMailer, Client, signedUp, type TestServer } from '../support/server.js';
import { openSocket } from '../support/socket.js';
import { verifyEmail } from '../support/verify-email.js';

const url = inject('redisUrl');

describe.skipIf(!url)('sharing across two nodes with the Redis bus', () => {
  let nodes: RedisNodes | undefined;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    nodes = await twoNodesOnRedis(url!);
    ({ a, b } = nodes);
  });
  afterAll(() => nodes?.stop());

  it('applies a role change and a removal made on one node to the member’s sockets and requests on the other', async () => {
    const board = await newBoard(a.url);
    const alice = await signedUp(a.url);
    await verifyEmail(a, alice.email, alice.client);
    expect(
      (await board.owner.post(`/api/boards/${board.projectId}/invitations`, { email: alice.email, role: 'admin' }))
        .status,
    ).toBe(201);
    const mail = await a.mail.next(alice.email, /^Invitation/);
    const invitationId = /\/invitations\/([\w-]+)#/.exec(mail.text)![1]!;
    // Accepted on node B: the membership is in the one store both nodes read.
    const aliceOnB = new Client(b.url);
    aliceOnB.cookies = alice.client.cookies;
    aliceOnB.csrfToken = alice.client.csrfToken;
    expect(
      (await aliceOnB.post(`/api/boards/invitations/${invitationId}/accept`, { token: CaptureMailer.tokenOf(mail) }))
        .status,
    ).toBe(200);
    const issued = await aliceOnB.post('/api/accounts/tokens', {
      name: 'alice-agent',
      scope: 'workspace',
      projectId: board.projectId,
      role: 'admin',
    });
    const agentOnB = new Client(b.url, { authorization: `Bearer ${issued.body.secret}` });

    const sessionOnB = await openSocket(b.url, {
      cookie: `board_session=${alice.client.cookies.get('board_session')}`,
    });
    const tokenOnB = await openSocket(b.url, { authorization: agentOnB.defaults.authorization! });
    for (const socket of [sessionOnB, tokenOnB]) {
      socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
      expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({ role: 'admin' });
    }

    expect(
      (await board.owner.post(`/api/boards/${board.projectId}/members/${alice.accountId}/role`, { role: 'member' }))
        .status,
    ).toBe(200);
    for (const socket of [sessionOnB, tokenOnB])
      expect(await socket.next((m) => m.type === 'unsubscribed')).toMatchObject({ boardId: board.projectId });
    expectError(await agentOnB.post('/api/items/reorder', { workIds: ['W-1'] }), 403, 'ROLE_REQUIRED');
    for (const socket of [sessionOnB, tokenOnB]) {
      socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
      expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({ role: 'member' });
    }

    expect(
      (await board.owner.request('DELETE', `/api/boards/${board.projectId}/members/${alice.accountId}`)).status,
    ).toBe(204);
    expect((await tokenOnB.closed).code).toBe(4001);
    expect(await sessionOnB.next((m) => m.type === 'unsubscribed')).toMatchObject({
      reason: expect.stringContaining('no longer'),
    });
    expectError(await aliceOnB.get(`/api/status?projectId=${board.projectId}`), 403, 'PROJECT_SCOPE_DENIED');
    expectError(await agentOnB.get('/api/status'), 401, 'INVALID_SERVICE_TOKEN');
    sessionOnB.ws.close();
  });
});
