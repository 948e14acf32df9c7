// Members over real HTTP and WebSocket: who sees whose address, who may change and remove whom,
// a change taking effect on the next request and on sockets and tokens, and the owner being
// projects.ownerId alone.
import { expect, it } from 'vitest';
import { modify } from '../../store/ports/store.js';
import { newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { Client } from '../support/server.js';
import { openSocket } from '../support/socket.js';
import type { SharingKit } from './sharing-kit.js';

export function memberCases(kit: SharingKit): void {
  const { url, srv, person, invite, listed, join, setRole, remove, cookieOf, subscribed, statusOf } = kit;

  it('shows members’ addresses to admins and the owner only; the others see display names or a short stable id', async () => {
    const board = await newBoard(url());
    const ownerId = (await board.owner.get('/api/auth/me')).body.user.id as string;
    const [admin, member, viewer] = await Promise.all([person(), person(), person()]);
    await join(board, admin, 'admin');
    await join(board, member, 'member');
    await join(board, viewer, 'viewer');
    expect(
      (await admin.client.request('PATCH', '/api/account/profile', { json: { displayName: 'Ada the admin' } })).status,
    ).toBe(200);
    const seenBy = async (client: Client) =>
      Object.fromEntries(
        ((await client.get(`/api/boards/${board.projectId}/members`)).body.members as { userId: string }[]).map((m) => [
          m.userId,
          m,
        ]),
      );

    for (const [who, client] of [
      ['viewer', viewer.client],
      ['member', member.client],
    ] as const) {
      const seen = await seenBy(client);
      const self = who === 'viewer' ? viewer : member;
      expect(seen[ownerId], who).toMatchObject({
        email: null,
        displayName: null,
        name: `member ${ownerId.slice(0, 8)}`,
        role: 'owner',
      });
      expect(seen[admin.accountId], who).toMatchObject({
        email: null,
        displayName: 'Ada the admin',
        name: 'Ada the admin',
        role: 'admin',
      });
      expect(seen[self.accountId], who).toMatchObject({ email: self.email, name: self.email });
      const others = Object.values(seen).filter((m) => (m as { userId: string }).userId !== self.accountId);
      expect(JSON.stringify(others), who).not.toMatch(/@example\.com/);
    }
    for (const client of [admin.client, board.owner]) {
      const seen = await seenBy(client);
      expect(seen[member.accountId]).toMatchObject({ email: member.email, name: member.email });
      expect(seen[viewer.accountId]).toMatchObject({ email: viewer.email });
      expect(seen[admin.accountId]).toMatchObject({ email: admin.email, name: 'Ada the admin' });
    }
    // The same member as the viewer saw them keeps their short id on the next read.
    expect((await seenBy(viewer.client))[member.accountId]).toMatchObject({
      name: `member ${member.accountId.slice(0, 8)}`,
    });
  });

  it('lets only the owner make admins, and admins manage members and viewers only', async () => {
    const board = await newBoard(url());
    const [admin, other, member] = await Promise.all([person(), person(), person()]);
    await join(board, admin, 'admin');
    const ownerId = (await board.owner.get('/api/auth/me')).body.user.id as string;

    expectError(await invite(admin.client, board.projectId, other.email, 'admin'), 403, 'ROLE_REQUIRED');
    await join(board, member, 'member', admin.client);
    await join(board, other, 'admin');
    expectError(await setRole(admin.client, board.projectId, other.accountId, 'member'), 403, 'ROLE_REQUIRED');
    expectError(await setRole(admin.client, board.projectId, member.accountId, 'admin'), 403, 'ROLE_REQUIRED');
    expectError(await remove(admin.client, board.projectId, other.accountId), 403, 'ROLE_REQUIRED');
    expectError(await setRole(admin.client, board.projectId, ownerId, 'viewer'), 409, 'OWNER_IMMUTABLE');
    expectError(await remove(admin.client, board.projectId, ownerId), 409, 'OWNER_IMMUTABLE');
    expectError(await remove(board.owner, board.projectId, ownerId), 409, 'OWNER_IMMUTABLE');
    expectError(await setRole(board.owner, board.projectId, ownerId, 'admin'), 409, 'OWNER_IMMUTABLE');
    expectError(await setRole(board.owner, board.projectId, 'nobody', 'viewer'), 404, 'MEMBER_NOT_FOUND');
    expectError(await setRole(board.owner, board.projectId, member.accountId, 'owner'), 400, 'INVALID_INPUT');
    expectError(await remove(member.client, board.projectId, admin.accountId), 403, 'ROLE_REQUIRED');

    expect((await setRole(admin.client, board.projectId, member.accountId, 'viewer')).body.member).toMatchObject({
      userId: member.accountId,
      role: 'viewer',
    });
    expect((await setRole(board.owner, board.projectId, other.accountId, 'member')).body.member.role).toBe('member');
    expect(statusOf(await remove(admin.client, board.projectId, other.accountId))).toBe(204);
    expectError(await remove(admin.client, board.projectId, other.accountId), 404, 'MEMBER_NOT_FOUND');
    // Anyone may leave.
    expect(statusOf(await remove(member.client, board.projectId, member.accountId))).toBe(204);
    expect(statusOf(await remove(admin.client, board.projectId, admin.accountId))).toBe(204);
    expect(await listed(admin.client, board.projectId)).toBeUndefined();
    expect(
      (await board.owner.get(`/api/boards/${board.projectId}/members`)).body.members.map(
        (m: { role: string }) => m.role,
      ),
    ).toEqual(['owner']);
  });

  it('applies a lower role and a removal on the next request: tokens narrowed then revoked, sockets unsubscribed and closed', async () => {
    const board = await newBoard(url());
    const alice = await person();
    await join(board, alice, 'admin');
    const boardPath = (path: string) => `${path}?projectId=${board.projectId}`;
    const issue = async (role?: string) => {
      const res = await alice.client.post('/api/accounts/tokens', {
        name: `agent-${role ?? 'default'}`,
        scope: 'workspace',
        projectId: board.projectId,
        ...(role ? { role } : {}),
      });
      expect(res.status, res.text).toBe(201);
      return {
        id: res.body.token.id as string,
        client: new Client(url(), { authorization: `Bearer ${res.body.secret}` }),
      };
    };
    const adminToken = await issue('admin');
    const memberToken = await issue();
    expect((await adminToken.client.post('/api/items', { title: 'first' })).status).toBe(201);
    expect((await adminToken.client.post('/api/items/reorder', { workIds: ['W-1'] })).status).toBe(200);

    const sessionSocket = await openSocket(url(), cookieOf(alice.client));
    const tokenSocket = await openSocket(url(), { authorization: adminToken.client.defaults.authorization! });
    expect(await subscribed(sessionSocket, board.projectId)).toMatchObject({ type: 'subscribed', role: 'admin' });
    expect(await subscribed(tokenSocket, board.projectId)).toMatchObject({ type: 'subscribed', role: 'admin' });

    // admin → member
    expect((await setRole(board.owner, board.projectId, alice.accountId, 'member')).status).toBe(200);
    for (const socket of [sessionSocket, tokenSocket]) {
      expect(await socket.next((m) => m.type === 'unsubscribed')).toMatchObject({
        boardId: board.projectId,
        reason: expect.stringContaining('member'),
      });
    }
    expectError(await alice.client.get(`/api/boards/${board.projectId}/invitations`), 403, 'ROLE_REQUIRED');
    expectError(await adminToken.client.post('/api/items/reorder', { workIds: ['W-1'] }), 403, 'ROLE_REQUIRED');
    expect((await srv().store.tokens.get(adminToken.id))!.role).toBe('member');
    expect((await alice.client.get(boardPath('/api/status'))).status).toBe(200);
    expect(await listed(alice.client, board.projectId)).toMatchObject({ role: 'member' });
    expect(await subscribed(tokenSocket, board.projectId)).toMatchObject({ type: 'subscribed', role: 'member' });

    // member → viewer: both tokens narrowed to viewer
    expect((await setRole(board.owner, board.projectId, alice.accountId, 'viewer')).status).toBe(200);
    await tokenSocket.next((m) => m.type === 'unsubscribed');
    expectError(await memberToken.client.post('/api/items', { title: 'second' }), 403, 'ROLE_REQUIRED');
    expect((await memberToken.client.get('/api/status')).status).toBe(200);
    expect(
      (await srv().store.tokens.find({ accountId: alice.accountId, boardId: board.projectId })).map((t) => t.role),
    ).toEqual(['viewer', 'viewer']);
    // A raise gives tokens nothing back: they stay as narrowed.
    expect((await setRole(board.owner, board.projectId, alice.accountId, 'member')).status).toBe(200);
    expectError(await memberToken.client.post('/api/items', { title: 'third' }), 403, 'ROLE_REQUIRED');
    expect(await subscribed(sessionSocket, board.projectId)).toMatchObject({ type: 'subscribed', role: 'member' });

    // removal
    expect((await remove(board.owner, board.projectId, alice.accountId)).status).toBe(204);
    expect(await sessionSocket.next((m) => m.type === 'unsubscribed')).toMatchObject({
      boardId: board.projectId,
      reason: expect.stringContaining('no longer'),
    });
    expect((await tokenSocket.closed).code).toBe(4001);
    expectError(await alice.client.get(boardPath('/api/status')), 403, 'PROJECT_SCOPE_DENIED');
    expectError(await memberToken.client.get('/api/status'), 401, 'INVALID_SERVICE_TOKEN');
    expect(
      (await srv().store.tokens.find({ accountId: alice.accountId, boardId: board.projectId })).every((t) => t.revoked),
    ).toBe(true);
    expect(await listed(alice.client, board.projectId)).toBeUndefined();
    expect(await subscribed(sessionSocket, board.projectId)).toMatchObject({
      type: 'error',
      error: { code: 'PROJECT_SCOPE_DENIED' },
    });
    sessionSocket.ws.close();
  });

  it('derives the owner from the board alone: a membership saying owner for anyone else counts as admin', async () => {
    const board = await newBoard(url());
    const ownerId = (await board.owner.get('/api/auth/me')).body.user.id as string;
    const stray = await person();
    await join(board, stray, 'member');
    // As a transfer cut short could leave them: the stray's membership says owner, the owner's says admin.
    await modify(srv().store.members, `${board.projectId}:${stray.accountId}`, () => ({ role: 'owner' as const }));
    await modify(srv().store.members, `${board.projectId}:${ownerId}`, () => ({ role: 'admin' as const }));

    const seen = (await stray.client.get(`/api/boards/${board.projectId}/members`)).body;
    expect(seen.role).toBe('admin');
    expect(seen.members.map((m: { userId: string; role: string }) => [m.userId, m.role])).toEqual([
      [ownerId, 'owner'],
      [stray.accountId, 'admin'],
    ]);
    expect((await stray.client.get(`/api/boards/${board.projectId}/invitations`)).status).toBe(200);
    expectError(
      await stray.client.post(`/api/boards/${board.projectId}/transfers`, { toUserId: ownerId }),
      403,
      'ROLE_REQUIRED',
    );
    expectError(
      await stray.client.get(`/api/account/billing?projectId=${board.projectId}`),
      403,
      'PROJECT_SCOPE_DENIED',
    );
    expectError(await remove(stray.client, board.projectId, ownerId), 409, 'OWNER_IMMUTABLE');

    expect((await board.owner.get(`/api/boards/${board.projectId}/members`)).body.role).toBe('owner');
    expect((await board.owner.get(`/api/account/billing?projectId=${board.projectId}`)).status).toBe(200);
    expectError(await setRole(board.owner, board.projectId, ownerId, 'member'), 409, 'OWNER_IMMUTABLE');
    // No transfer of theirs is under way: the owner may set the stray's membership right.
    expect((await setRole(board.owner, board.projectId, stray.accountId, 'member')).body.member).toMatchObject({
      role: 'member',
    });
    expect(statusOf(await remove(board.owner, board.projectId, stray.accountId))).toBe(204);
  });
}
