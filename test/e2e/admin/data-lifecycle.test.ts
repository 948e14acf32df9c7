// The data's lifecycle over real HTTP and sockets (DOMAIN.md "Operators", docs/operators.md): what
// an account's deletion closes at once, and what a board's deletion leaves behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, signedUp, startTestServer, type TestServer } from '../../support/server.js';
import { openSocket } from '../../support/socket.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ ADDRESS_RATE_PER_MINUTE: '100000', BOARD_RATE_SCALE: '100' });
});
afterAll(async () => {
  await srv.stop();
});

describe('account deletion', () => {
  it('closes at once the socket of a token that came to the account with a board it took over (and then handed on)', async () => {
    const anon = await new Client(srv.url).post('/api/accounts/anon-provision', {});
    expect(anon.status, anon.text).toBe(201);
    const projectId = anon.body.projectId as string;
    const socket = await openSocket(srv.url, { authorization: `Bearer ${anon.body.secret}` });
    socket.send({ type: 'subscribe', boardId: projectId, topics: ['activity'] });
    expect((await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).type).toBe('subscribed');

    const user = await signedUp(srv.url);
    const claimed = await user.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.body.claimSecret });
    expect(claimed.status, claimed.text).toBe(200);
    // The person hands the board on to a member (and stays on as admin), then deletes their account.
    const heir = await signedUp(srv.url);
    await srv.store.members.insert({
      _id: `${projectId}:${heir.accountId}`,
      version: 1,
      projectId,
      accountId: heir.accountId,
      role: 'member',
      acceptedAt: Date.now(),
    });
    const offered = await user.client.post(`/api/boards/${projectId}/transfers`, { toUserId: heir.accountId });
    expect(offered.status, offered.text).toBe(201);
    const accepted = await heir.client.post(`/api/boards/transfers/${offered.body.transfer.transferId}/accept`);
    expect(accepted.status, accepted.text).toBe(200);

    const deleted = await user.client.request('DELETE', '/api/account', {
      json: { confirmEmail: user.email, currentPassword: user.password },
    });
    expect(deleted.status, deleted.text).toBe(204);
    // The token is revoked in the store ...
    const tokens = await srv.store.tokens.find({ accountId: user.accountId });
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.every((t) => t.revoked)).toBe(true);
    // ... yet its socket still hears the board: the new owner's next item reaches it.
    const made = await heir.client.post(`/api/items?projectId=${projectId}`, { title: 'after the deletion' });
    expect(made.status, made.text).toBe(201);
    const heard = await socket
      .next((m) => JSON.stringify(m).includes('after the deletion'), 3000)
      .then(
        () => 'heard the new item',
        () => 'heard nothing',
      );
    // The operator's revoke closes such a socket at once (people-flow.ts); the deletion should too.
    const closed = await Promise.race([
      socket.closed.then((c) => c.code),
      new Promise<string>((resolve) => setTimeout(() => resolve('still open after 5 s'), 5000)),
    ]);
    expect({ heard, closed }).toEqual({ heard: 'heard nothing', closed: 4001 });
  });
});
