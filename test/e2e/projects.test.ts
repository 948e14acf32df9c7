// Projects over real HTTP: listing with the contract's cursor rules, summaries, creation limits,
// renaming and deletion, under /api/projects and /api/boards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ ADDRESS_RATE_PER_MINUTE: '100000' }); // many signups here; the address budget is tested elsewhere
});
afterAll(async () => {
  await srv.stop();
});

const SUMMARY_FIELDS = [
  'agentCount',
  'blockedCount',
  'itemCount',
  'lastActivityAt',
  'name',
  'owned',
  'projectId',
  'role',
  'starred',
  'verifyCount',
];

/** Shares `projectId` with `accountId` as an accepted member (sharing has its own issue). */
async function share(
  projectId: string,
  accountId: string,
  role: 'admin' | 'member' | 'viewer' = 'member',
  acceptedAt = Date.now(),
) {
  await srv.store.members.insert({
    _id: `${projectId}:${accountId}`,
    version: 1,
    projectId,
    accountId,
    role,
    acceptedAt,
  });
}

describe('GET /api/projects', () => {
  it('lists the default project with exactly the summary fields', async () => {
    const { client, accountId } = await signedUp(srv.url);
    const res = await client.get('/api/projects');
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ nextCursor: null, cursorReset: false });
    expect(res.body.projects).toHaveLength(1);
    const summary = res.body.projects[0];
    expect(Object.keys(summary).sort()).toEqual(SUMMARY_FIELDS);
    expect(summary).toMatchObject({
      name: 'My board',
      itemCount: 0,
      verifyCount: 0,
      blockedCount: 0,
      agentCount: 0,
      owned: true,
      role: 'owner',
      starred: true,
    });
    expect(res.text).not.toContain(accountId);
  });

  it('includes accepted shared boards with their role, and counts agents holding live board tokens', async () => {
    const alice = await signedUp(srv.url);
    const bob = await signedUp(srv.url);
    const bobsBoard = (await bob.client.get('/api/projects')).body.projects[0].projectId;
    await share(bobsBoard, alice.accountId, 'viewer');
    for (const name of ['a', 'b'])
      await bob.client.post('/api/accounts/tokens', { name, scope: 'workspace', projectId: bobsBoard });
    const listed = (await alice.client.get('/api/projects')).body.projects;
    expect(listed.map((p: { owned: boolean; role: string }) => [p.owned, p.role])).toEqual([
      [true, 'owner'],
      [false, 'viewer'],
    ]);
    expect(listed[1]).toMatchObject({ projectId: bobsBoard, agentCount: 2, starred: false });
  });

  it('pages with opaque cursors, visiting every project once', async () => {
    const owner = await signedUp(srv.url);
    const ids = [(await owner.client.get('/api/projects')).body.projects[0].projectId];
    for (let i = 0; i < 6; i++) {
      const other = await signedUp(srv.url);
      const id = (await other.client.get('/api/projects')).body.projects[0].projectId;
      await share(id, owner.accountId, 'member', Date.now() + i + 1);
      ids.push(id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: {
        body: { projects: { projectId: string }[]; pagination: { nextCursor: string | null; cursorReset: boolean } };
      } = await owner.client.get(`/api/projects?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.body.pagination.cursorReset).toBe(false);
      seen.push(...res.body.projects.map((p) => p.projectId));
      cursor = res.body.pagination.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
  });

  it('restarts at the first page, with cursorReset, for a malformed cursor or one whose page size or count changed', async () => {
    const owner = await signedUp(srv.url);
    for (let i = 0; i < 3; i++) {
      const other = await signedUp(srv.url);
      await share(
        (await other.client.get('/api/projects')).body.projects[0].projectId,
        owner.accountId,
        'member',
        Date.now() + i + 1,
      );
    }
    const first = await owner.client.get('/api/projects?limit=2');
    const cursor = first.body.pagination.nextCursor;
    expect(cursor).toEqual(expect.any(String));
    const page2 = await owner.client.get(`/api/projects?limit=2&cursor=${cursor}`);
    expect(page2.body.pagination.cursorReset).toBe(false);
    expect(page2.body.projects[0].projectId).not.toBe(first.body.projects[0].projectId);

    for (const query of [
      `limit=3&cursor=${cursor}`,
      'limit=2&cursor=garbage',
      `limit=2&cursor=${Buffer.from('[99,2,4]').toString('base64url')}`,
    ]) {
      const res = await owner.client.get(`/api/projects?${query}`);
      expect(res.body.pagination.cursorReset, query).toBe(true);
      expect(res.body.projects[0].projectId).toBe(first.body.projects[0].projectId);
    }
    await owner.client.post('/api/projects', { name: 'one more' });
    const afterGrowth = await owner.client.get(`/api/projects?limit=2&cursor=${cursor}`);
    expect(afterGrowth.body.pagination.cursorReset).toBe(true);
    expect(afterGrowth.body.projects[0].projectId).toBe(first.body.projects[0].projectId);
  });

  it('falls back to 50 for any limit outside 1..200, and refuses an empty cursor', async () => {
    const owner = await signedUp(srv.url);
    for (const limit of ['0', '201', 'abc', '-1', '2.5']) {
      const res = await owner.client.get(`/api/projects?limit=${limit}`);
      expect(res.status, limit).toBe(200);
    }
    expectError(await owner.client.get('/api/projects?cursor='), 400, 'INVALID_CURSOR');
  });

  it('validates a selected board against accepted access, and needs a session', async () => {
    const owner = await signedUp(srv.url);
    const other = await signedUp(srv.url);
    const othersBoard = (await other.client.get('/api/projects')).body.projects[0].projectId;
    expectError(await owner.client.get(`/api/projects?projectId=${othersBoard}`), 403, 'PROJECT_SCOPE_DENIED');
    expectError(await owner.client.get('/api/projects?projectId=no%20way'), 400, 'INVALID_PROJECT_ID');
    expectError(await new Client(srv.url).get('/api/projects'), 401, 'UNAUTHENTICATED');
  });
});

describe('POST /api/projects', () => {
  it('creates a board with the nine rate headers, up to the Free limit of 3 owned', async () => {
    const { client } = await signedUp(srv.url);
    const created = await client.post('/api/projects', { name: '  Second board ' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(SUMMARY_FIELDS);
    expect(created.body).toMatchObject({
      name: 'Second board',
      owned: true,
      role: 'owner',
      starred: false,
      itemCount: 0,
    });
    for (const h of [
      'limit',
      'remaining',
      'reset',
      'request-limit',
      'request-remaining',
      'request-reset',
      'write-limit',
      'write-remaining',
      'write-reset',
    ]) {
      expect(Number.isInteger(Number(created.headers.get(`x-ratelimit-${h}`))), h).toBe(true);
    }
    expect(Number(created.headers.get('x-ratelimit-write-remaining'))).toBe(119);
    expect((await client.post('/api/projects', { name: 'Third' })).status).toBe(201);
    expectError(await client.post('/api/projects', { name: 'Fourth' }), 403, 'FREE_PROJECT_LIMIT');
    expect((await client.get('/api/projects')).body.projects).toHaveLength(3);
  });

  it('keeps the limit when boards are created at once: of 6 concurrent creations on a Free account owning 1, exactly 2 succeed', async () => {
    const { client } = await signedUp(srv.url);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => client.post('/api/projects', { name: `Rush ${i}` })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 403, 403, 403, 403]);
    for (const r of results.filter((r) => r.status === 403)) expect(r.body.error.code).toBe('FREE_PROJECT_LIMIT');
    expect((await client.get('/api/projects')).body.projects).toHaveLength(3);
  });

  it('keeps the limit when a creation races a takeover of an anonymous board: one of the two goes through, 5 rounds', async () => {
    for (let round = 0; round < 5; round++) {
      const { client } = await signedUp(srv.url);
      expect((await client.post('/api/projects', { name: 'Second' })).status).toBe(201);
      const anon = await new Client(srv.url).post('/api/accounts/anon-provision', { projectName: `Night ${round}` });
      expect(anon.status, anon.text).toBe(201);
      const [created, claimed] = await Promise.all([
        client.post('/api/projects', { name: 'Third' }),
        client.post('/api/accounts/claim-anonymous', { claimSecret: anon.body.claimSecret }),
      ]);
      const won = [created.status === 201, claimed.status === 200];
      expect(won.filter(Boolean), `${created.text} ${claimed.text}`).toHaveLength(1);
      expectError(won[0] ? claimed : created, 403, 'FREE_PROJECT_LIMIT');
      expect((await client.get('/api/projects')).body.projects.filter((p: { owned: boolean }) => p.owned)).toHaveLength(
        3,
      );
    }
  });

  it('answers 503 ACCOUNT_BUSY with Retry-After when another change to the account’s boards holds it too long, creating nothing', async () => {
    const { client, accountId } = await signedUp(srv.url);
    await srv.store.accountLocks.insert({
      _id: accountId,
      version: 1,
      holder: 'a slow creation elsewhere',
      until: Date.now() + 60_000,
    });
    const busy = await client.post('/api/projects', { name: 'Waits' });
    expectError(busy, 503, 'ACCOUNT_BUSY');
    expect(busy.headers.get('retry-after')).toBe('1');
    expect((await client.get('/api/projects')).body.projects).toHaveLength(1);
    await srv.store.accountLocks.delete(accountId);
    expect((await client.post('/api/projects', { name: 'Goes through' })).status).toBe(201);
  });

  it('checks the name', async () => {
    const { client } = await signedUp(srv.url);
    for (const name of ['', '   ', 'x'.repeat(81), 'tab\there'])
      expectError(await client.post('/api/projects', { name }), 400, 'INVALID_PROJECT_NAME');
    expectError(await client.post('/api/projects', {}), 400, 'INVALID_INPUT');
    expectError(await client.post('/api/projects', { name: 'ok', plan: 'pro' }), 400, 'INVALID_INPUT');
  });

  it('takes an account-scoped Bearer, refuses workspace and resource Bearers, and needs a credential', async () => {
    const { client } = await signedUp(srv.url);
    const projectId = (await client.get('/api/projects')).body.projects[0].projectId;
    const issue = async (body: object) =>
      (await client.post('/api/accounts/tokens', { name: 't', ...body })).body.secret as string;
    const asBearer = (secret: string) => new Client(srv.url, { authorization: `Bearer ${secret}` });
    const byAgent = await asBearer(await issue({ scope: 'account' })).post('/api/projects', { name: 'Agent made' });
    expect(byAgent.status).toBe(201);
    expect(byAgent.body.owned).toBe(true);
    expectError(
      await asBearer(await issue({ scope: 'workspace', projectId })).post('/api/projects', { name: 'no' }),
      403,
      'PROJECT_SCOPE_DENIED',
    );
    expectError(
      await asBearer(await issue({ scope: 'resource', projectId, resources: ['items'] })).post('/api/projects', {
        name: 'no',
      }),
      403,
      'PROJECT_SCOPE_DENIED',
    );
    expectError(
      await asBearer('agb_not-a-real-token').post('/api/projects', { name: 'no' }),
      401,
      'INVALID_SERVICE_TOKEN',
    );
    expectError(await new Client(srv.url).post('/api/projects', { name: 'no' }), 401, 'UNAUTHENTICATED');
  });
});

describe('PATCH and DELETE /api/projects/{projectId}', () => {
  it('renames for admins and owners, refuses members and strangers', async () => {
    const owner = await signedUp(srv.url);
    const member = await signedUp(srv.url);
    const stranger = await signedUp(srv.url);
    const id = (await owner.client.get('/api/projects')).body.projects[0].projectId;
    await share(id, member.accountId, 'member');
    const rename = (c: Client, name: string) => c.request('PATCH', `/api/projects/${id}`, { json: { name } });
    const renamed = await rename(owner.client, 'Renamed');
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ projectId: id, name: 'Renamed' });
    expectError(await rename(owner.client, ''), 400, 'INVALID_PROJECT_NAME');
    expectError(await rename(member.client, 'Mine now'), 403, 'ROLE_REQUIRED');
    expectError(await rename(stranger.client, 'Mine now'), 403, 'PROJECT_SCOPE_DENIED');
    expectError(
      await owner.client.request('PATCH', '/api/projects/bad%20id', { json: { name: 'x' } }),
      400,
      'INVALID_PROJECT_ID',
    );
  });

  it('deletes for the owner only, taking memberships and board tokens with it', async () => {
    const owner = await signedUp(srv.url);
    const admin = await signedUp(srv.url);
    const id = (await owner.client.post('/api/projects', { name: 'Doomed' })).body.projectId;
    await share(id, admin.accountId, 'admin');
    const token = (await owner.client.post('/api/accounts/tokens', { name: 'a', scope: 'workspace', projectId: id }))
      .body.secret;
    expectError(await admin.client.request('DELETE', `/api/projects/${id}`), 403, 'ROLE_REQUIRED');
    expect((await owner.client.request('DELETE', `/api/projects/${id}`)).status).toBe(204);
    expect(
      (await owner.client.get('/api/projects')).body.projects.map((p: { projectId: string }) => p.projectId),
    ).not.toContain(id);
    expect((await admin.client.get('/api/projects')).body.projects).toHaveLength(1);
    expectError(
      await new Client(srv.url, { authorization: `Bearer ${token}` }).get('/api/whoami'),
      401,
      'INVALID_SERVICE_TOKEN',
    );
    expectError(await owner.client.request('DELETE', `/api/projects/${id}`), 403, 'PROJECT_SCOPE_DENIED');
  });

  it('leaves no member starring the deleted board (defaultProjectId must be a board the session can reach)', async () => {
    const owner = await signedUp(srv.url);
    const made = await owner.client.post('/api/projects', { name: 'shared board' });
    expect(made.status, made.text).toBe(201);
    const shared = made.body.projectId as string;
    const member = await signedUp(srv.url);
    await share(shared, member.accountId);
    for (const who of [owner, member]) {
      const starred = await who.client.request('PATCH', `/api/account/profile?projectId=${shared}`, {
        json: { defaultProjectId: shared },
      });
      expect(starred.status, starred.text).toBe(200);
    }
    expect((await owner.client.request('DELETE', `/api/boards/${shared}`)).status).toBe(204);
    for (const who of [owner, member]) {
      const own = (await who.client.get('/api/projects')).body.projects[0].projectId as string;
      const profile = await who.client.get(`/api/account/profile?projectId=${own}`);
      expect(profile.status, profile.text).toBe(200);
      expect(profile.body.defaultProjectId, 'the profile still names the deleted board as default').toBeNull();
    }
  });
});

describe('/api/boards', () => {
  it('is the same family as /api/projects', async () => {
    const { client } = await signedUp(srv.url);
    const created = await client.post('/api/boards', { name: 'Via boards' });
    expect(created.status).toBe(201);
    expect((await client.get('/api/boards')).body).toEqual((await client.get('/api/projects')).body);
    expect(
      (await client.request('PATCH', `/api/boards/${created.body.projectId}`, { json: { name: 'Renamed' } })).body.name,
    ).toBe('Renamed');
    expect((await client.request('DELETE', `/api/boards/${created.body.projectId}`)).status).toBe(204);
  });
});
