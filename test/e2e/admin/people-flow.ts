// The operators' people routes (DOMAIN.md "Operators", people and access) over real HTTP, run on
// each store: finding accounts, one account's detail, revoking its credentials and one token, and
// deletion for everyone: delete (sign-in refused, tokens dead, its boards closed to members with
// BOARD_CLOSED) → restore → purge (the exact email), and the sweep that purges after 30 days,
// the owner's own deletion included. Every action's audit row is checked.
import { describe, expect, it } from 'vitest';
import { serveStore, type OpenedStore } from '../../support/stores.js';
import { Client, type TestServer } from '../../support/server.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { billingRecord } from '../../support/billing.js';
import { expectError } from '../../support/expect-error.js';
import { openSocket } from '../../support/socket.js';
import { unique } from '../../support/temp.js';
import type { AuditRecord } from '../../../store/ports/store.js';

const DAY = 86_400_000;
const PASSWORD = 'correct horse battery staple';
// Every account here signs up from 127.0.0.1.
const ENV = { ADDRESS_RATE_PER_MINUTE: '100000' };

interface Person {
  client: Client;
  email: string;
  accountId: string;
  projectId: string;
}

async function person(srv: TestServer, email = `${unique('person')}@example.com`): Promise<Person> {
  const client = new Client(srv.url);
  const res = await client.post('/api/auth/signup', { email, password: PASSWORD });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
  return { client, email, accountId: res.body.account.id, projectId: res.body.account.defaultProjectId };
}

async function token(
  by: Client,
  body: Record<string, unknown> = { name: 'agent', scope: 'account' },
): Promise<{ id: string; secret: string; agent: Client; base: string }> {
  const res = await by.post('/api/accounts/tokens', body);
  if (res.status !== 201) throw new Error(`token failed: ${res.status} ${res.text}`);
  return {
    id: res.body.token.id,
    secret: res.body.secret,
    agent: new Client(by.base, { authorization: `Bearer ${res.body.secret}` }),
    base: by.base,
  };
}

/** Makes `who` an accepted member of the board, as an accepted invitation leaves it. */
async function join(srv: TestServer, projectId: string, who: Person, role: 'admin' | 'member'): Promise<void> {
  await srv.store.members.insert({
    _id: `${projectId}:${who.accountId}`,
    version: 1,
    projectId,
    accountId: who.accountId,
    role,
    acceptedAt: Date.now(),
  });
}

/** The operator audit rows about `target`, oldest first. */
async function rows(srv: TestServer, target: string): Promise<AuditRecord[]> {
  return (
    await srv.store.audit.find(
      { target },
      {
        sort: [
          ['at', 1],
          ['_id', 1],
        ],
      },
    )
  ).filter((r) => r.action.startsWith('admin.'));
}

const login = (srv: TestServer, email: string) =>
  new Client(srv.url).post('/api/auth/login', { email, password: PASSWORD });

export function peopleFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`operators and people, on the ${name} store`, () => {
    const email = operatorEmail();
    const served = serveStore(open, { OPERATOR_EMAILS: email, ...ENV });
    const srv = () => served.srv;
    let op: Client;
    let operatorId: string;
    const opSession = async () => {
      if (!op) ({ client: op, accountId: operatorId } = await confirmedOperator(srv(), email));
      return op;
    };

    it('finds accounts by email prefix (in email order, page by page) or by id, and lists the deleted ones', async () => {
      const op = await opSession();
      const prefix = unique('find');
      const people: Person[] = [];
      for (const letter of ['c', 'a', 'b']) people.push(await person(srv(), `${prefix}-${letter}@example.com`));
      const first = await op.get(`/api/admin/users?q=${prefix.toUpperCase()}&limit=2`);
      expect(first.status, first.text).toBe(200);
      expect(first.body.users.map((u: { email: string }) => u.email)).toEqual([
        `${prefix}-a@example.com`,
        `${prefix}-b@example.com`,
      ]);
      const second = await op.get(`/api/admin/users?q=${prefix}&limit=2&cursor=${first.body.nextCursor}`);
      expect(second.body).toEqual({
        users: [expect.objectContaining({ email: `${prefix}-c@example.com` })],
        nextCursor: null,
      });

      const c = people[0]!;
      const byId = await op.get(`/api/admin/users?q=${c.accountId}`);
      expect(byId.body).toEqual({
        users: [
          {
            id: c.accountId,
            email: c.email,
            displayName: null,
            emailVerified: false,
            status: 'active',
            plan: 'free',
            boards: { owned: 1, member: 0 },
            createdAt: expect.any(String),
            lastSignInAt: expect.any(String),
            deletedAt: null,
            deletedBy: null,
            purgeAfter: null,
          },
        ],
        nextCursor: null,
      });
      expect((await op.get(`/api/admin/users?q=${unique('nobody')}`)).body).toEqual({ users: [], nextCursor: null });

      expect(
        (await op.post(`/api/admin/users/${people[1]!.accountId}/delete`, { reason: 'spam account' })).status,
      ).toBe(200);
      const deleted = await op.get('/api/admin/users?status=deleted&limit=200');
      expect(deleted.body.users[0]).toMatchObject({
        id: people[1]!.accountId,
        status: 'deleted',
        deletedBy: 'operator',
      });
      expect(
        (await op.get(`/api/admin/users?q=${prefix}&status=active`)).body.users.map((u: { id: string }) => u.id),
      ).toEqual([people[2]!.accountId, c.accountId]);

      expectError(await op.get('/api/admin/users'), 400, 'INVALID_INPUT');
      expectError(await op.get(`/api/admin/users?q=${prefix}&limit=500`), 400, 'INVALID_INPUT');
      expectError(await op.get(`/api/admin/users?q=${prefix}&cursor=not-a-cursor`), 400, 'INVALID_CURSOR');
      expectError(await op.get(`/api/admin/users?q=zz&cursor=${first.body.nextCursor}`), 400, 'INVALID_CURSOR');
      expectError(await op.get(`/api/admin/users?q=${'a'.repeat(255)}`), 400, 'INVALID_INPUT');
      // Not an operator: the path does not exist.
      expectError(await c.client.get(`/api/admin/users?q=${prefix}`), 404, 'NOT_FOUND');
    });

    it('shows one account: boards with roles, tokens without secrets or hashes, billing and audit rows; the read is audited', async () => {
      const op = await opSession();
      const owner = await person(srv());
      const other = await person(srv());
      await join(srv(), other.projectId, owner, 'member');
      const issued = await token(owner.client);
      await srv().store.billing.insert(
        billingRecord(owner.projectId, owner.accountId, { status: 'canceled', interval: 'month' }),
      );

      const res = await op.get(`/api/admin/users/${owner.accountId}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.user).toMatchObject({
        id: owner.accountId,
        email: owner.email,
        status: 'active',
        boards: { owned: 1, member: 1 },
      });
      expect(res.body.boards).toEqual(
        expect.arrayContaining([
          {
            projectId: owner.projectId,
            name: 'My board',
            role: 'owner',
            plan: 'free',
            owned: true,
            closed: false,
            ownerId: owner.accountId,
            ownerEmail: owner.email,
          },
          {
            projectId: other.projectId,
            name: 'My board',
            role: 'member',
            plan: 'free',
            owned: false,
            closed: false,
            ownerId: other.accountId,
            ownerEmail: other.email,
          },
        ]),
      );
      expect(res.body.tokens).toEqual([expect.objectContaining({ id: issued.id, scope: 'account', revoked: false })]);
      expect(res.body.billing).toEqual([
        {
          projectId: owner.projectId,
          status: 'canceled',
          interval: 'month',
          currentPeriodEnd: null,
          cancelAtPeriodEnd: false,
          pastDueSince: null,
        },
      ]);
      const stored = (await srv().store.tokens.get(issued.id))!;
      expect(res.text).not.toContain(issued.secret);
      expect(res.text).not.toContain(stored.secretHash);
      expect(res.text).not.toContain((await srv().store.accounts.get(owner.accountId))!.passwordHash);
      expect(res.text).not.toContain('customerId');

      const view = await rows(srv(), `account:${owner.accountId}`);
      expect(view).toEqual([
        expect.objectContaining({
          action: 'admin.user.view',
          actor: `user:${operatorId}`,
          target: `account:${owner.accountId}`,
        }),
      ]);
      // The next read shows that row among the rows about the account, the operator by address.
      const again = (await op.get(`/api/admin/users/${owner.accountId}`)).body.audit;
      expect(again.about[0]).toMatchObject({
        id: view[0]!._id,
        action: 'admin.user.view',
      });
      expect(again.accounts).toMatchObject({
        [operatorId]: { email, deleted: false },
        [owner.accountId]: { email: owner.email, deleted: false },
      });

      expectError(await op.get('/api/admin/users/00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
      expectError(await op.get('/api/admin/users/not-an-id'), 404, 'NOT_FOUND');
    });

    it('revokes every session and token of an account and closes its sockets; a reason is required', async () => {
      const op = await opSession();
      const user = await person(srv());
      const second = new Client(srv().url);
      expect((await second.post('/api/auth/login', { email: user.email, password: PASSWORD })).status).toBe(200);
      const issued = await token(user.client);
      const socket = await openSocket(srv().url, { authorization: `Bearer ${issued.secret}` });
      // A code that would enroll agents as the account later: it goes with the rest.
      const board = (await user.client.get('/api/projects')).body.projects[0].projectId as string;
      const code = await user.client.post(`/api/projects/${board}/agents/enroll`, { uses: 5, ttlSeconds: 3600 });
      expect(code.status, code.text).toBe(201);

      expectError(await op.post(`/api/admin/users/${user.accountId}/revoke`, {}), 400, 'INVALID_INPUT');
      expectError(await op.post(`/api/admin/users/${user.accountId}/revoke`, { reason: 'x' }), 400, 'INVALID_INPUT');
      expect(await rows(srv(), `account:${user.accountId}`)).toEqual([]);
      expect((await user.client.get('/api/auth/me')).status).toBe(200);

      const res = await op.post(`/api/admin/users/${user.accountId}/revoke`, {
        reason: 'credentials leaked in a public repo',
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({
        sessions: 2,
        tokens: 1,
        enrollments: 1,
        deviceGrants: 0,
        invitations: 0,
        transfers: 0,
      });
      expect((await socket.closed).code).toBe(4001);
      expectError(
        await new Client(srv().url).post('/api/projects/enroll', { code: code.body.code, name: 'late-agent' }),
        400,
        'INVALID_LINK_TOKEN',
      );
      expectError(await user.client.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      expectError(await second.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      expectError(await issued.agent.get('/api/whoami'), 401, 'INVALID_SERVICE_TOKEN');
      expect(await rows(srv(), `account:${user.accountId}`)).toEqual([
        expect.objectContaining({
          action: 'admin.revoke',
          actor: `user:${operatorId}`,
          data: expect.objectContaining({
            reason: 'credentials leaked in a public repo',
            sessions: 2,
            tokens: 1,
            operator: true,
          }),
        }),
      ]);
      // The account itself is untouched: its person signs in again.
      expect((await login(srv(), user.email)).status).toBe(200);
    });

    it('closes the socket of a token that came to the account with a board it took over after the socket opened', async () => {
      const op = await opSession();
      const anon = await new Client(srv().url).post('/api/accounts/anon-provision', {});
      expect(anon.status, anon.text).toBe(201);
      const socket = await openSocket(srv().url, { authorization: `Bearer ${anon.body.secret}` });
      socket.send({ type: 'subscribe', boardId: anon.body.projectId, topics: ['activity'] });
      expect((await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).type).toBe('subscribed');
      const user = await person(srv());
      const claimed = await user.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.body.claimSecret });
      expect(claimed.status, claimed.text).toBe(200);

      const res = await op.post(`/api/admin/users/${user.accountId}/revoke`, { reason: 'abuse from its agents' });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({
        sessions: 1,
        tokens: 1,
        enrollments: 0,
        deviceGrants: 0,
        invitations: 0,
        transfers: 0,
      });
      expect((await socket.closed).code).toBe(4001);
    });

    it('lists an account’s tokens newest first, page by page, and revokes one with a reason', async () => {
      const op = await opSession();
      const user = await person(srv());
      const made: Awaited<ReturnType<typeof token>>[] = [];
      for (const n of [1, 2, 3]) {
        made.push(await token(user.client, { name: `agent ${n}`, scope: 'account' }));
        srv().advance(1000);
      }
      const first = await op.get(`/api/admin/tokens?userId=${user.accountId}&limit=2`);
      expect(first.status, first.text).toBe(200);
      expect(first.body.tokens.map((t: { id: string }) => t.id)).toEqual([made[2]!.id, made[1]!.id]);
      const second = await op.get(`/api/admin/tokens?userId=${user.accountId}&limit=2&cursor=${first.body.nextCursor}`);
      expect(second.body).toEqual({
        tokens: [expect.objectContaining({ id: made[0]!.id, name: 'agent 1', revoked: false })],
        nextCursor: null,
      });
      for (const t of made)
        expect(first.text + second.text).not.toContain((await srv().store.tokens.get(t.id))!.secretHash);
      expect(await rows(srv(), `account:${user.accountId}`)).toEqual([
        expect.objectContaining({ action: 'admin.tokens.view' }),
        expect.objectContaining({ action: 'admin.tokens.view' }),
      ]);

      const revoke = (id: string, json: unknown) => op.request('DELETE', `/api/admin/tokens/${id}`, { json });
      expectError(await revoke(made[1]!.id, {}), 400, 'INVALID_INPUT');
      expect((await made[1]!.agent.get('/api/whoami')).status).toBe(200);
      const res = await revoke(made[1]!.id, { reason: 'agent misbehaving' });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ token: { id: made[1]!.id, revoked: true }, already: false });
      expectError(await made[1]!.agent.get('/api/whoami'), 401, 'INVALID_SERVICE_TOKEN');
      expect((await made[0]!.agent.get('/api/whoami')).status).toBe(200);
      expect((await revoke(made[1]!.id, { reason: 'agent misbehaving' })).body).toMatchObject({ already: true });
      expect(await rows(srv(), `token:${made[1]!.id}`)).toEqual([
        expect.objectContaining({
          action: 'admin.token.revoke',
          actor: `user:${operatorId}`,
          data: expect.objectContaining({ reason: 'agent misbehaving', accountId: user.accountId, already: false }),
        }),
        expect.objectContaining({ action: 'admin.token.revoke', data: expect.objectContaining({ already: true }) }),
      ]);
      expect(
        (await op.get(`/api/admin/tokens?userId=${user.accountId}`)).body.tokens.find(
          (t: { id: string }) => t.id === made[1]!.id,
        ),
      ).toMatchObject({ revoked: true });

      expectError(await revoke('no-such-token', { reason: 'agent misbehaving' }), 404, 'TOKEN_NOT_FOUND');
      expectError(await op.get('/api/admin/tokens?userId=00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
      expectError(await op.get('/api/admin/tokens'), 400, 'INVALID_INPUT');
      expectError(await op.get(`/api/admin/tokens?userId=${user.accountId}&cursor=bad`), 400, 'INVALID_CURSOR');
    });

    it('deletes an account (sign-in refused, tokens dead, its board closed to members) → restores it → purges it with its exact email', async () => {
      const op = await opSession();
      const owner = await person(srv());
      const member = await person(srv());
      await join(srv(), owner.projectId, member, 'admin');
      const ownerToken = await token(owner.client);
      const agent = await token(member.client, { name: 'worker', scope: 'workspace', projectId: owner.projectId });
      const status = `/api/status?projectId=${owner.projectId}`;
      expect((await member.client.get(status)).status).toBe(200);
      expect((await agent.agent.get('/api/status')).status).toBe(200);
      const ownerSocket = await openSocket(srv().url, { authorization: `Bearer ${ownerToken.secret}` });
      const agentSocket = await openSocket(srv().url, { authorization: `Bearer ${agent.secret}` });
      agentSocket.send({ type: 'subscribe', boardId: owner.projectId, topics: ['activity'] });
      await agentSocket.next((m) => m.type === 'subscribed');
      const target = `account:${owner.accountId}`;

      expectError(await op.post(`/api/admin/users/${owner.accountId}/delete`, {}), 400, 'INVALID_INPUT');
      expect(await rows(srv(), target)).toEqual([]);
      const deleted = await op.post(`/api/admin/users/${owner.accountId}/delete`, { reason: 'fraudulent sign-up' });
      expect(deleted.status, deleted.text).toBe(200);
      expect(deleted.body).toMatchObject({
        user: { id: owner.accountId, status: 'deleted', deletedBy: 'operator' },
        boards: [owner.projectId],
      });
      expect(Date.parse(deleted.body.user.purgeAfter) - Date.parse(deleted.body.user.deletedAt)).toBe(30 * DAY);
      expect((await ownerSocket.closed).code).toBe(4001);
      // The closed board's agents are cut off, and cannot watch it again until a restore: refused as REST refuses them.
      expect((await agentSocket.closed).code).toBe(4001);
      const watching = await openSocket(srv().url, { authorization: `Bearer ${agent.secret}` });
      watching.send({ type: 'subscribe', boardId: owner.projectId, topics: ['activity'] });
      expect(await watching.next((m) => m.type === 'error' || m.type === 'subscribed')).toMatchObject({
        type: 'error',
        error: { code: 'BOARD_CLOSED', status: 403 },
      });
      watching.ws.close();

      // Sign-in refused (to whoever knows the password), sessions and tokens dead.
      expectError(await login(srv(), owner.email), 403, 'ACCOUNT_DELETED');
      expectError(
        await new Client(srv().url).post('/api/auth/login', { email: owner.email, password: 'wrong password 000' }),
        401,
        'INVALID_CREDENTIALS',
      );
      expectError(await owner.client.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      expectError(await ownerToken.agent.get('/api/whoami'), 401, 'INVALID_SERVICE_TOKEN');
      // The board is closed to its members and their agents, with its own code; their own boards are not.
      expectError(await member.client.get(status), 403, 'BOARD_CLOSED');
      expectError(await agent.agent.get('/api/status'), 403, 'BOARD_CLOSED');
      expectError(await agent.agent.post('/api/items', { title: 'more work' }), 403, 'BOARD_CLOSED');
      expect((await member.client.get(`/api/status?projectId=${member.projectId}`)).status).toBe(200);
      expect((await op.get(`/api/admin/users/${owner.accountId}`)).body.boards).toEqual([
        expect.objectContaining({ projectId: owner.projectId, closed: true }),
      ]);
      // Deleting again changes nothing more.
      expect(
        (await op.post(`/api/admin/users/${owner.accountId}/delete`, { reason: 'fraudulent sign-up' })).body.user
          .purgeAfter,
      ).toBe(deleted.body.user.purgeAfter);

      expectError(await op.post(`/api/admin/users/${owner.accountId}/restore`, {}), 400, 'INVALID_INPUT');
      const restored = await op.post(`/api/admin/users/${owner.accountId}/restore`, { reason: 'appeal accepted' });
      expect(restored.status, restored.text).toBe(200);
      expect(restored.body).toMatchObject({
        user: { status: 'active', deletedAt: null, purgeAfter: null },
        boards: [owner.projectId],
      });
      expect((await login(srv(), owner.email)).status).toBe(200);
      expect((await member.client.get(status)).status).toBe(200);
      expect((await agent.agent.get('/api/status')).status).toBe(200);
      const back = await openSocket(srv().url, { authorization: `Bearer ${agent.secret}` });
      back.send({ type: 'subscribe', boardId: owner.projectId, topics: ['activity'] });
      expect(await back.next((m) => m.type === 'error' || m.type === 'subscribed')).toMatchObject({
        type: 'subscribed',
        boardId: owner.projectId,
      });
      back.ws.close();
      // Revoked credentials stay revoked.
      expectError(await ownerToken.agent.get('/api/whoami'), 401, 'INVALID_SERVICE_TOKEN');
      expectError(
        await op.post(`/api/admin/users/${owner.accountId}/restore`, { reason: 'appeal accepted' }),
        409,
        'ACCOUNT_NOT_RESTORABLE',
      );

      expectError(
        await op.post(`/api/admin/users/${owner.accountId}/purge`, {
          reason: 'erasure request',
          confirm: owner.email.toUpperCase(),
        }),
        400,
        'ACCOUNT_DELETE_CONFIRM_MISMATCH',
      );
      expectError(
        await op.post(`/api/admin/users/${owner.accountId}/purge`, { confirm: owner.email }),
        400,
        'INVALID_INPUT',
      );
      expect(await srv().store.accounts.get(owner.accountId)).toMatchObject({ email: owner.email });
      const purged = await op.post(`/api/admin/users/${owner.accountId}/purge`, {
        reason: 'erasure request',
        confirm: owner.email,
      });
      expect(purged.status, purged.text).toBe(200);
      expect(purged.body).toEqual({ purged: true, boards: [owner.projectId] });
      expect(await srv().store.accounts.get(owner.accountId)).toBeNull();
      expect(await srv().store.projects.get(owner.projectId)).toBeNull();
      expect(await srv().store.tokens.get(ownerToken.id)).toBeNull();
      expectError(await member.client.get(status), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await login(srv(), owner.email), 401, 'INVALID_CREDENTIALS');
      expectError(await op.get(`/api/admin/users/${owner.accountId}`), 404, 'NOT_FOUND');

      // The audit outlives the account: one row per action, each with its reason.
      expect((await rows(srv(), target)).map((r) => [r.action, r.data.reason, r.actor])).toEqual([
        ['admin.delete', 'fraudulent sign-up', `user:${operatorId}`],
        ['admin.user.view', null, `user:${operatorId}`],
        ['admin.delete', 'fraudulent sign-up', `user:${operatorId}`],
        ['admin.restore', 'appeal accepted', `user:${operatorId}`],
        ['admin.purge', 'erasure request', `user:${operatorId}`],
      ]);
      expect((await rows(srv(), target))[2]!.data).toMatchObject({ already: true });
    });

    it('keeps an account with a live subscription the provider cannot cancel: 502, nothing deleted, no audit row', async () => {
      const op = await opSession();
      const user = await person(srv());
      await srv().store.billing.insert(
        billingRecord(user.projectId, user.accountId, {
          subscriptionId: 'sub_live',
          status: 'active',
          interval: 'month',
        }),
      );
      expectError(
        await op.post(`/api/admin/users/${user.accountId}/delete`, { reason: 'fraudulent sign-up' }),
        502,
        'PROVIDER_UNAVAILABLE',
      );
      expectError(
        await op.post(`/api/admin/users/${user.accountId}/purge`, { reason: 'erasure request', confirm: user.email }),
        502,
        'PROVIDER_UNAVAILABLE',
      );
      expect((await srv().store.accounts.get(user.accountId))?.deletedAt ?? null).toBeNull();
      expect((await login(srv(), user.email)).status).toBe(200);
      expect(await rows(srv(), `account:${user.accountId}`)).toEqual([]);
    });
  });

  describe(`the purge sweep, on the ${name} store`, () => {
    const email = operatorEmail();
    const served = serveStore(open, { OPERATOR_EMAILS: email, ...ENV });
    const srv = () => served.srv;

    it('purges accounts 30 days after their deletion, the owner’s own included; restore is refused once the 30 days are over', async () => {
      const op = (await confirmedOperator(srv(), email)).client;
      const own = await person(srv());
      const byOperator = await person(srv());
      const restored = await person(srv());
      const active = await person(srv());
      const gone = await own.client.request('DELETE', '/api/account', {
        json: { confirmEmail: own.email, currentPassword: PASSWORD },
      });
      expect(gone.status, gone.text).toBe(204);
      expectError(await login(srv(), own.email), 403, 'ACCOUNT_DELETED');
      expect(await srv().store.projects.get(own.projectId)).toMatchObject({ deletedOwner: own.accountId });
      // The owner's own deletion is in the account's audit too.
      expect(await srv().store.audit.find({ target: `account:${own.accountId}` })).toEqual([
        expect.objectContaining({ action: 'account.delete', actor: `user:${own.accountId}` }),
      ]);
      for (const p of [byOperator, restored])
        expect((await op.post(`/api/admin/users/${p.accountId}/delete`, { reason: 'spam wave' })).status).toBe(200);
      expect(
        (await op.post(`/api/admin/users/${restored.accountId}/restore`, { reason: 'false positive' })).status,
      ).toBe(200);

      srv().advance(29 * DAY);
      expect(await srv().server.sweepDeleted()).toEqual({ accounts: [], boards: [], notices: [] });
      srv().advance(DAY + 60_000);
      // The operator's session outlived its 30 days too: sign in again.
      const again = new Client(srv().url);
      expect((await again.post('/api/auth/login', { email, password: 'operator password 123' })).status).toBe(200);
      expectError(
        await again.post(`/api/admin/users/${byOperator.accountId}/restore`, { reason: 'too late' }),
        409,
        'ACCOUNT_NOT_RESTORABLE',
      );

      const swept = await srv().server.sweepDeleted();
      expect(swept.accounts.sort()).toEqual([own.accountId, byOperator.accountId].sort());
      expect(swept.boards.sort()).toEqual([own.projectId, byOperator.projectId].sort());
      for (const p of [own, byOperator]) {
        expect(await srv().store.accounts.get(p.accountId)).toBeNull();
        expect(await srv().store.projects.get(p.projectId)).toBeNull();
      }
      for (const p of [restored, active]) {
        expect(await srv().store.accounts.get(p.accountId)).not.toBeNull();
        expect(await srv().store.projects.get(p.projectId)).not.toBeNull();
      }
      expect(
        (await new Client(srv().url).post('/api/auth/signup', { email: own.email, password: PASSWORD })).status,
      ).toBe(201);
      expect(await srv().server.sweepDeleted()).toEqual({ accounts: [], boards: [], notices: [] });
    });
  });
}
