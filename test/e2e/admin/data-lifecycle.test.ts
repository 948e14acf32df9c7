// The data's lifecycle over real HTTP and sockets (DOMAIN.md "Operators", docs/operators.md): what
// an export holds and an import makes of it, and what an account's deletion closes at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modify } from '../../../store/ports/store.js';
import { newBoard } from '../../support/board.js';
import { expectError } from '../../support/expect-error.js';
import { failOnce } from '../../support/fail-once.js';
import { operatorEmail, operatorSession } from '../../support/operators.js';
import { Client, signedUp, startTestServer, type Res, type TestServer } from '../../support/server.js';
import { openSocket } from '../../support/socket.js';
import { verifyEmail } from '../../support/verify-email.js';

type Line = { kind: string; boardId?: string; record?: Record<string, unknown>; [k: string]: unknown };

let srv: TestServer;
let operator: Client;
const opEmail = operatorEmail();
beforeAll(async () => {
  srv = await startTestServer({ OPERATOR_EMAILS: opEmail, ADDRESS_RATE_PER_MINUTE: '100000', BOARD_RATE_SCALE: '100' });
  operator = (await operatorSession(srv.url, opEmail)).client;
  await verifyEmail(srv, opEmail, operator);
});
afterAll(async () => {
  await srv.stop();
});

const linesOf = (res: Res): Line[] =>
  res.text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

async function exportOf(projectId: string): Promise<Line[]> {
  const res = await operator.get(`/api/admin/export?projectId=${projectId}`);
  expect(res.status, res.text).toBe(200);
  return linesOf(res);
}

async function boardsOf(client: Client): Promise<string[]> {
  return ((await client.get('/api/projects')).body.projects as { projectId: string }[]).map((p) => p.projectId);
}

describe('the export', () => {
  it('holds the board’s feedback entries, and imports with them counted as read past', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('reporter');
    const posted = await agent.post('/api/feedback', { text: 'the spec clause S-1 is ambiguous', kind: 'problem' });
    expect(posted.status, posted.text).toBe(201);
    const lines = await exportOf(board.projectId);
    const feedback = lines.filter((l) => l.kind === 'feedback');
    expect(feedback).toEqual([
      {
        kind: 'feedback',
        boardId: board.projectId,
        record: expect.objectContaining({ text: 'the spec clause S-1 is ambiguous', kind: 'problem', status: 'open' }),
      },
    ]);
    // The ledger that counts the open entries is what is left out, and says so.
    const leftOut = lines[0]!.leftOut as { collections: Record<string, string> };
    expect(Object.keys(leftOut.collections)).toContain('feedbackLedgers');
    const target = await signedUp(srv.url);
    const imported = await operator.post('/api/admin/import', { userId: target.accountId, lines });
    expect(imported.status, imported.text).toBe(201);
    expect(imported.body.skipped).toMatchObject({ feedback: 1 });
  });
});

describe('the import', () => {
  async function smallExport(): Promise<Line[]> {
    const board = await newBoard(srv.url);
    const agent = await board.agent('maker');
    expect((await agent.post('/api/items', { title: 'one' })).status).toBe(201);
    expect((await agent.post('/api/items', { title: 'two' })).status).toBe(201);
    return exportOf(board.projectId);
  }

  it('retried with the same export (its answer lost) answers the board the first made, not a second', async () => {
    const lines = await smallExport();
    const target = await signedUp(srv.url);
    const first = await operator.post('/api/admin/import', { userId: target.accountId, lines });
    expect(first.status, first.text).toBe(201);
    const again = await operator.post('/api/admin/import', { userId: target.accountId, lines });
    expect(again.status, again.text).toBe(201);
    const boards = await boardsOf(target.client);
    expect(boards.length, `boards after a retried import: ${boards.join(', ')}`).toBe(2); // its own + one import
    expect(again.body).toEqual(first.body);
    // The same export into another account is that account's own import.
    const other = await signedUp(srv.url);
    const theirs = await operator.post('/api/admin/import', { userId: other.accountId, lines });
    expect(theirs.status, theirs.text).toBe(201);
    expect(theirs.body.projectId).not.toBe(first.body.projectId);
  });

  it('retried after one cut short before its commit, makes the board in its place', async () => {
    const lines = await smallExport();
    const target = await signedUp(srv.url);
    failOnce(srv.store.boards, 'commit');
    failOnce(srv.store.tokens, 'deleteMany'); // its clean-up fails too
    expect((await operator.post('/api/admin/import', { userId: target.accountId, lines })).status).toBe(503);
    const [cut] = await srv.store.projects.find({ ownerId: target.accountId, importing: { $gte: 0 } });
    expect(cut).toBeDefined();
    const again = await operator.post('/api/admin/import', { userId: target.accountId, lines });
    expect(again.status, again.text).toBe(201);
    expect(await srv.store.projects.get(cut!._id)).toBeNull();
    expect(await boardsOf(target.client)).toHaveLength(2);
    expect((await target.client.get(`/api/status?projectId=${again.body.projectId}`)).body.counts).toMatchObject({
      ready: 2,
    });
  });
});

describe('account deletion', () => {
  /** A board taken over from an anonymous account, its token's socket watching it, then handed on to a member. */
  async function handedOn() {
    const anon = await new Client(srv.url).post('/api/accounts/anon-provision', {});
    expect(anon.status, anon.text).toBe(201);
    const projectId = anon.body.projectId as string;
    const socket = await openSocket(srv.url, { authorization: `Bearer ${anon.body.secret}` });
    socket.send({ type: 'subscribe', boardId: projectId, topics: ['activity'] });
    expect((await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).type).toBe('subscribed');

    const user = await signedUp(srv.url);
    const claimed = await user.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.body.claimSecret });
    expect(claimed.status, claimed.text).toBe(200);
    // The person hands the board on to a member (and stays on as admin).
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
    const agent = new Client(srv.url, { authorization: `Bearer ${anon.body.secret}` });
    return { projectId, socket, agent, user, heir };
  }

  /** Whether the socket still hears the board (the heir's next item) and how it closed, within 5 s. */
  async function afterwards({ projectId, socket, heir }: Awaited<ReturnType<typeof handedOn>>) {
    const made = await heir.client.post(`/api/items?projectId=${projectId}`, { title: 'after the deletion' });
    expect(made.status, made.text).toBe(201);
    const heard = await socket
      .next((m) => JSON.stringify(m).includes('after the deletion'), 3000)
      .then(
        () => 'heard the new item',
        () => 'heard nothing',
      );
    // The operator's revoke closes such a socket at once (people-flow.ts); a deletion does too.
    const closed = await Promise.race([
      socket.closed.then((c) => c.code),
      new Promise<string>((resolve) => setTimeout(() => resolve('still open after 5 s'), 5000)),
    ]);
    return { heard, closed };
  }

  it('closes at once the socket of a token that came to the account with a board it took over (and then handed on)', async () => {
    const setting = await handedOn();
    const { user } = setting;
    const deleted = await user.client.request('DELETE', '/api/account', {
      json: { confirmEmail: user.email, currentPassword: user.password },
    });
    expect(deleted.status, deleted.text).toBe(204);
    const tokens = await srv.store.tokens.find({ accountId: user.accountId });
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.every((t) => t.revoked)).toBe(true);
    expect(await afterwards(setting)).toEqual({ heard: 'heard nothing', closed: 4001 });
  });

  it('closes it as well when an operator purges the account at once', async () => {
    const setting = await handedOn();
    const { user } = setting;
    const purged = await operator.post(`/api/admin/users/${user.accountId}/purge`, {
      reason: 'erasure request',
      confirm: user.email,
    });
    expect(purged.status, purged.text).toBe(200);
    expect(await afterwards(setting)).toEqual({ heard: 'heard nothing', closed: 4001 });
  });

  it('revokes, when an operator purges it while live, the tokens the purge keeps: they answer 401', async () => {
    const { projectId, agent, user } = await handedOn();
    // A transfer cut short before the previous owner stepped down: the account still holds the
    // owner's membership of the board it handed on, so the purge keeps that board's tokens.
    await modify(srv.store.members, `${projectId}:${user.accountId}`, () => ({ role: 'owner' as const }));
    const purged = await operator.post(`/api/admin/users/${user.accountId}/purge`, {
      reason: 'erasure request',
      confirm: user.email,
    });
    expect(purged.status, purged.text).toBe(200);
    expectError(await agent.get(`/api/items?projectId=${projectId}`), 401, 'INVALID_SERVICE_TOKEN');
  });

  it('revokes the agents’ tokens of an anonymous account purged while its claim is cut short', async () => {
    const anon = await new Client(srv.url).post('/api/accounts/anon-provision', {});
    expect(anon.status, anon.text).toBe(201);
    const { projectId, accountId } = anon.body as { projectId: string; accountId: string };
    const agent = new Client(srv.url, { authorization: `Bearer ${anon.body.secret}` });
    const user = await signedUp(srv.url);
    // The claim is cut short before the board's tokens moved: they are still the anonymous account's.
    failOnce(srv.store.tokens, 'update');
    const cut = await user.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.body.claimSecret });
    expect(cut.status, cut.text).toBe(503);
    expect((await srv.store.tokens.find({ boardId: projectId })).map((t) => t.accountId)).toEqual([accountId]);
    const purged = await operator.post(`/api/admin/users/${accountId}/purge`, {
      reason: 'erasure request',
      confirm: (await srv.store.accounts.get(accountId))!.email,
    });
    expect(purged.status, purged.text).toBe(200);
    // The person finishes the claim: the kept token moves to them, and must not act for them.
    const finished = await user.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.body.claimSecret });
    expect(finished.status, finished.text).toBe(200);
    expectError(await agent.get(`/api/items?projectId=${projectId}`), 401, 'INVALID_SERVICE_TOKEN');
  });
});
