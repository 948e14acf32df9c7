// Agent onboarding over real HTTP, run on each store adapter: enrollment codes, anonymous boards
// and their claim (by secret and by nonce), provisioning, and the races. Claims cut short by a
// failure, and the 7-day sweep, are claim-recovery-flow.ts.
import { describe, expect, it } from 'vitest';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { Client, signedUp, type Res } from '../support/server.js';
import { unique } from '../support/temp.js';
import { openSocket } from '../support/socket.js';
import { anonymousBoard as anonymousBoardAt, bearer, holdTokens, sha256 } from '../support/onboarding.js';

const DAY = 86_400_000;
const statuses = (results: Res[]) => results.map((r) => r.status).sort();

export function onboardingFlow(name: string, open: () => Promise<OpenedStore>): void {
  // FerretDB answers some of these in seconds: room beyond the default 30 s.
  describe(`agent onboarding on the ${name} store`, { timeout: 90_000 }, () => {
    // Every test here signs up and redeems from one address: the per-address budget has its own test.
    const served = serveStore(open, { ADDRESS_RATE_PER_MINUTE: '100000' });
    const url = () => served.srv.url;

    const anonymousBoard = (body?: unknown) => anonymousBoardAt(url(), body);

    it('gives an agent with nothing but an enrollment code a token that claims work, until the code’s uses run out', async () => {
      const board = await newBoard(url());
      const minted = await board.owner.post(`/api/projects/${board.projectId}/agents/enroll`, {
        uses: 2,
        ttlSeconds: 600,
      });
      expect(minted.status, minted.text).toBe(201);
      expect(minted.body).toMatchObject({ projectId: board.projectId, role: 'member', uses: 2 });
      const { code } = minted.body as { code: string };
      expect(code).toMatch(/^agb_enroll_[\w-]{43}$/);
      const stored = await served.srv.store.enrollments.get(sha256(code));
      expect(stored).toMatchObject({ projectId: board.projectId, usesLeft: 2 });
      expect(JSON.stringify(stored)).not.toContain(code);

      // The agent: no credential, only the code.
      const enrolled = await new Client(url()).post('/api/projects/enroll', { code, name: 'enrolled-1' });
      expect(enrolled.status, enrolled.text).toBe(201);
      expect(enrolled.body.token).toMatchObject({
        name: 'enrolled-1',
        scope: 'workspace',
        projectId: board.projectId,
        role: 'member',
        expiresAt: null,
      });
      const agent = bearer(url(), enrolled.body.secret);
      expect((await agent.post('/api/items', { title: 'first job' })).status).toBe(201);
      const grant = await agent.post('/api/claim', {});
      expect(grant.status, grant.text).toBe(200);
      expect(grant.body).toMatchObject({ workId: 'W-1', purpose: 'work' });
      expect((await agent.get('/api/whoami')).body).toMatchObject({
        principal: `agent:${enrolled.body.token.agentId}`,
        workspace: { projectId: board.projectId },
      });

      // The /api/boards twin spends the second use; the third finds the code spent.
      expect((await new Client(url()).post('/api/boards/enroll', { code, name: 'enrolled-2' })).status).toBe(201);
      expectError(
        await new Client(url()).post('/api/projects/enroll', { code, name: 'enrolled-3' }),
        400,
        'INVALID_LINK_TOKEN',
      );
      // Kept, spent, until it expires: a revocation of all its maker issued still finds it.
      expect(await served.srv.store.enrollments.get(sha256(code))).toMatchObject({ usesLeft: 0, spent: true });
      expectError(
        await board.owner.request('DELETE', `/api/projects/${board.projectId}/agents/enroll/${sha256(code)}`),
        404,
        'ENROLLMENT_CODE_NOT_FOUND',
      );
      expectError(
        await new Client(url()).post('/api/projects/enroll', { code: 'agb_enroll_never-minted', name: 'x' }),
        400,
        'INVALID_LINK_TOKEN',
      );
      const listed = (await board.owner.get('/api/projects')).body.projects.find(
        (p: { projectId: string }) => p.projectId === board.projectId,
      );
      expect(listed.agentCount).toBe(2);

      // A viewer code gives viewer tokens: they read, and may not write.
      const viewerCode = (
        await board.owner.post(`/api/boards/${board.projectId}/agents/enroll`, {
          role: 'viewer',
          uses: 1,
          ttlSeconds: 60,
        })
      ).body.code as string;
      const viewer = await new Client(url()).post('/api/boards/enroll', { code: viewerCode, name: 'watcher' });
      expect(viewer.body.token.role).toBe('viewer');
      expect((await bearer(url(), viewer.body.secret).get('/api/status')).status).toBe(200);
      expectError(
        await bearer(url(), viewer.body.secret).post('/api/items', { title: 'not mine to add' }),
        403,
        'ROLE_REQUIRED',
      );
    });

    it('refuses expired codes, and minting by workspace tokens, non-admins, other boards and bad input; a token’s code dies with it', async () => {
      const board = await newBoard(url());
      const short = (
        await board.owner.post(`/api/projects/${board.projectId}/agents/enroll`, { uses: 5, ttlSeconds: 60 })
      ).body.code as string;
      served.srv.advance(61_000);
      expectError(
        await new Client(url()).post('/api/projects/enroll', { code: short, name: 'late' }),
        400,
        'INVALID_LINK_TOKEN',
      );

      const worker = await board.agent('worker');
      expectError(
        await worker.post(`/api/projects/${board.projectId}/agents/enroll`, { uses: 1, ttlSeconds: 60 }),
        403,
        'PROJECT_SCOPE_DENIED',
      );
      const other = await newBoard(url());
      expectError(
        await other.owner.post(`/api/projects/${board.projectId}/agents/enroll`, { uses: 1, ttlSeconds: 60 }),
        403,
        'PROJECT_SCOPE_DENIED',
      );
      expectError(
        await board.owner.post('/api/projects/not%20an%20id/agents/enroll', { uses: 1, ttlSeconds: 60 }),
        400,
        'INVALID_PROJECT_ID',
      );
      for (const bad of [
        { uses: 0, ttlSeconds: 60 },
        { uses: 101, ttlSeconds: 60 },
        { uses: 1, ttlSeconds: 59 },
        { uses: 1, ttlSeconds: 86_401 },
        { uses: 1, ttlSeconds: 60, role: 'owner' },
        { uses: 1, ttlSeconds: 60, role: 'admin' },
        { uses: 1.5, ttlSeconds: 60 },
        { ttlSeconds: 60 },
      ]) {
        expectError(
          await board.owner.post(`/api/projects/${board.projectId}/agents/enroll`, bad),
          400,
          'INVALID_INPUT',
        );
      }
      // Whoever holds a code is nobody in particular: never an admin, even by a code stored as one (before the cap).
      const stale = 'agb_enroll_stored-before-the-cap';
      await served.srv.store.enrollments.insert({
        _id: sha256(stale),
        version: 1,
        projectId: board.projectId,
        role: 'admin',
        usesLeft: 1,
        createdBy: `user:${(await served.srv.store.projects.get(board.projectId))!.ownerId}`,
        createdAt: Date.now(),
        expiresAt: Date.now() + 3_600_000,
      });
      const capped = await new Client(url()).post('/api/projects/enroll', { code: stale, name: 'not-an-admin' });
      expect(capped.status, capped.text).toBe(201);
      expect(capped.body.token.role).toBe('member');
      expectError(
        await bearer(url(), capped.body.secret).post('/api/items/reorder', { workIds: ['W-1'] }),
        403,
        'ROLE_REQUIRED',
      );
      expectError(await new Client(url()).post('/api/projects/enroll', { code: short }), 400, 'INVALID_INPUT');
      expectError(
        await new Client(url()).post('/api/projects/enroll', { code: short, name: 'x', role: 'admin' }),
        400,
        'INVALID_INPUT',
      );
      // Agent names are printable, on every route that takes one (as the device flow's clientName).
      expectError(
        await new Client(url()).post('/api/projects/enroll', { code: short, name: 'report\u202efdp.exe' }),
        400,
        'INVALID_INPUT',
      );
      expectError(
        await new Client(url()).post('/api/accounts/anon-provision', { agentName: 'two\nlines' }),
        400,
        'INVALID_INPUT',
      );

      // A member (memberships are inserted directly: sharing is another module) may not enroll agents.
      const member = await signedUp(url());
      await served.srv.store.members.insert({
        _id: `${board.projectId}:${member.accountId}`,
        version: 1,
        projectId: board.projectId,
        accountId: member.accountId,
        role: 'member',
        acceptedAt: Date.now(),
      });
      expectError(
        await member.client.post(`/api/projects/${board.projectId}/agents/enroll`, { uses: 1, ttlSeconds: 60 }),
        403,
        'ROLE_REQUIRED',
      );

      // An account token's code: its tokens expire with it, and once it is revoked the code is dead.
      const expiresAt = new Date(Date.now() + 3 * 3600_000).toISOString();
      const account = await board.owner.post('/api/accounts/tokens', {
        name: 'automation',
        scope: 'account',
        expiresAt,
      });
      const automation = bearer(url(), account.body.secret);
      const byToken = await automation.post(`/api/projects/${board.projectId}/agents/enroll`, {
        uses: 2,
        ttlSeconds: 86_400,
      });
      expect(byToken.status, byToken.text).toBe(201);
      expect(Date.parse(byToken.body.expiresAt)).toBeLessThanOrEqual(Date.parse(expiresAt));
      const fromToken = await new Client(url()).post('/api/projects/enroll', {
        code: byToken.body.code,
        name: 'bounded',
      });
      expect(fromToken.status, fromToken.text).toBe(201);
      expect(fromToken.body.token.expiresAt).toBe(expiresAt);
      expect((await board.owner.request('DELETE', `/api/accounts/tokens/${account.body.token.id}`)).status).toBe(204);
      expectError(
        await new Client(url()).post('/api/projects/enroll', { code: byToken.body.code, name: 'too late' }),
        400,
        'INVALID_LINK_TOKEN',
      );

      // A code whose maker holds as many tokens as an account may: refused as the code's, the maker's count not told, the use kept.
      const full = await newBoard(url());
      const fullCode = (
        await full.owner.post(`/api/projects/${full.projectId}/agents/enroll`, { uses: 1, ttlSeconds: 600 })
      ).body.code as string;
      await holdTokens(served.srv.store, (await served.srv.store.projects.get(full.projectId))!.ownerId, 500);
      const overCap = await new Client(url()).post('/api/projects/enroll', { code: fullCode, name: 'one too many' });
      expectError(overCap, 400, 'INVALID_LINK_TOKEN');
      expect(overCap.body.error.message).not.toMatch(/500|tokens/);
      expect(await served.srv.store.enrollments.get(sha256(fullCode))).toMatchObject({ usesLeft: 1 });

      // A code whose maker lost the admin role can no longer admit agents, and its use is not lost.
      await served.srv.store.members.update(`${board.projectId}:${member.accountId}`, 1, { role: 'admin' });
      const adminCode = (
        await member.client.post(`/api/projects/${board.projectId}/agents/enroll`, { uses: 1, ttlSeconds: 600 })
      ).body.code as string;
      const admin = await served.srv.store.members.get(`${board.projectId}:${member.accountId}`);
      await served.srv.store.members.update(admin!._id, admin!.version, { role: 'member' });
      expectError(
        await new Client(url()).post('/api/projects/enroll', { code: adminCode, name: 'refused' }),
        400,
        'INVALID_LINK_TOKEN',
      );
      expect(await served.srv.store.enrollments.get(sha256(adminCode))).toMatchObject({ usesLeft: 1 });
    });

    it('gives the last use of a code to exactly one of two redemptions racing for it', async () => {
      const board = await newBoard(url());
      for (let round = 0; round < 5; round++) {
        const code = (
          await board.owner.post(`/api/projects/${board.projectId}/agents/enroll`, { uses: 1, ttlSeconds: 600 })
        ).body.code as string;
        const results = await Promise.all(
          [1, 2].map((n) => new Client(url()).post('/api/projects/enroll', { code, name: `racer-${round}-${n}` })),
        );
        expect(statuses(results)).toEqual([201, 400]);
        expectError(
          results.find((r) => r.status === 400)!,
          400,
          'INVALID_LINK_TOKEN',
        );
      }
      const tokens = await served.srv.store.tokens.find({ boardId: board.projectId });
      expect(tokens.filter((t) => t.name.startsWith('racer-'))).toHaveLength(5);
    });

    it('lets a person who signs up take an anonymous board over: board, items, log and the agent’s token intact', async () => {
      const anon = await anonymousBoard({ projectName: 'Night shift', agentName: 'night-agent' });
      expect(anon.token).toMatchObject({
        name: 'night-agent',
        scope: 'workspace',
        projectId: anon.projectId,
        role: 'member',
      });
      expect(anon.claimSecret.startsWith(`${anon.accountId}.`)).toBe(true);
      expect(Date.parse(anon.expiresAt) - Date.now()).toBeGreaterThan(7 * DAY - 60_000);
      const record = await served.srv.store.anonymousAccounts.get(anon.accountId);
      expect(record!.claimSecretHash).toBe(sha256(anon.claimSecret));

      // The agent works on its board at once.
      const { agent } = anon;
      const batch = await agent.post('/api/items/batch', {
        items: [
          { ref: 'a', title: 'Schema' },
          { ref: 'b', title: 'API', dependsOn: ['a'] },
        ],
      });
      expect(batch.status, batch.text).toBe(201);
      const grant = await agent.post('/api/claim', {});
      expect(grant.body).toMatchObject({ workId: 'W-1' });
      expect(
        (await agent.post('/api/status/heartbeat', { status: 'working', note: 'on W-1', workId: 'W-1' })).status,
      ).toBe(200);
      const before = (await agent.get('/api/activity?limit=200')).body.events as { seq: number; type: string }[];
      expect(before.map((e) => e.type)).toEqual(expect.arrayContaining(['item.created', 'lease.granted']));
      // Nobody signs in as the anonymous account, and its agent cannot reach account structure.
      const { email } = (await served.srv.store.accounts.get(anon.accountId))!;
      expectError(
        await new Client(url()).post('/api/auth/login', { email, password: 'anything at all 1' }),
        401,
        'INVALID_CREDENTIALS',
      );
      expectError(
        await agent.post('/api/accounts/provision', { projectName: 'more', agents: [] }),
        403,
        'PROJECT_SCOPE_DENIED',
      );
      // Nor does it admit more agents: no enrollment codes, no tokens of its own making.
      expectError(
        await agent.post(`/api/projects/${anon.projectId}/agents/enroll`, { uses: 1, ttlSeconds: 60 }),
        403,
        'PROJECT_SCOPE_DENIED',
      );
      expectError(
        await agent.post('/api/accounts/tokens', { name: 'second', scope: 'workspace', projectId: anon.projectId }),
        403,
        'PROJECT_SCOPE_DENIED',
      );
      expect(await served.srv.store.tokens.count({ boardId: anon.projectId })).toBe(1);

      // The agent watches its board live across the claim.
      const socket = await openSocket(url(), { authorization: `Bearer ${anon.secret}` });
      socket.send({ type: 'subscribe', boardId: anon.projectId, topics: ['activity'] });
      expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({
        boardId: anon.projectId,
        role: 'member',
      });

      const person = await signedUp(url());
      expectError(
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: `${anon.accountId}.wrong` }),
        400,
        'INVALID_LINK_TOKEN',
      );
      expectError(
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: 'no-dot-at-all' }),
        400,
        'INVALID_LINK_TOKEN',
      );
      expectError(
        await new Client(url()).post('/api/accounts/claim-anonymous', { claimSecret: anon.claimSecret }),
        401,
        'UNAUTHENTICATED',
      );
      const claimed = await person.client.post(
        '/api/accounts/claim-anonymous',
        { claimSecret: anon.claimSecret },
        { 'x-request-id': 'req-claim-1' },
      );
      expect(claimed.status, claimed.text).toBe(200);
      // The hand-over is audited once, with the request that asked for it.
      expect(
        (await served.srv.store.audit.find({ projectId: anon.projectId, action: 'board.claimed' })).map((r) => r.data),
      ).toEqual([{ from: anon.accountId, via: 'claim-secret', requestId: 'req-claim-1', address: '127.0.0.1' }]);
      expect(claimed.body.projects).toEqual([
        expect.objectContaining({
          projectId: anon.projectId,
          name: 'Night shift',
          itemCount: 2,
          agentCount: 1,
          owned: true,
          role: 'owner',
        }),
      ]);
      expectError(
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.claimSecret }),
        400,
        'INVALID_LINK_TOKEN',
      );

      // The board is the person's: listed, readable; its log is what it was; the anonymous account is gone.
      const listed = (await person.client.get('/api/projects')).body.projects.map(
        (p: { projectId: string; role: string }) => [p.projectId, p.role],
      );
      expect(listed).toContainEqual([anon.projectId, 'owner']);
      const after = (await person.client.get(`/api/activity?projectId=${anon.projectId}&limit=200`)).body.events as {
        seq: number;
      }[];
      expect(after).toEqual(before);
      expect((await person.client.get(`/api/items/W-2?projectId=${anon.projectId}`)).body).toMatchObject({
        title: 'API',
        state: 'pending',
      });
      expect(await served.srv.store.accounts.get(anon.accountId)).toBeNull();
      expect(await served.srv.store.anonymousAccounts.get(anon.accountId)).toBeNull();

      // The agent's token keeps working, as the same principal, now under the person's account.
      expect((await agent.get('/api/whoami')).body).toMatchObject({
        principal: `agent:${anon.token.agentId}`,
        account: { id: person.accountId },
      });
      expect((await agent.post('/api/lease', { leaseId: grant.body.leaseId, action: 'renew' })).status).toBe(200);
      expect((await agent.post('/api/items', { title: 'after the claim' })).status).toBe(201);
      const now = (await person.client.get(`/api/activity?projectId=${anon.projectId}&limit=200`)).body.events as {
        seq: number;
        actor: string;
        type: string;
      }[];
      expect(now[0]).toMatchObject({ actor: `agent:${anon.token.agentId}`, type: 'item.created' });
      expect(now.slice(-before.length)).toEqual(before); // the log goes on from where it was, gapless
      expect(now.map((e) => e.seq)).toEqual(Array.from({ length: now.length }, (_, i) => now.length - i));
      expect((await person.client.get('/api/accounts/tokens')).body.tokens).toContainEqual(
        expect.objectContaining({ name: 'night-agent', projectId: anon.projectId }),
      );
      // Its socket was not closed and still hears the board; a new one subscribes as before.
      expect(
        await socket.next((m) => m.type === 'event' && m.event.type === 'item.created' && m.seq === now[0]!.seq),
      ).toMatchObject({ boardId: anon.projectId });
      const fresh = await openSocket(url(), { authorization: `Bearer ${anon.secret}` });
      fresh.send({ type: 'subscribe', boardId: anon.projectId, topics: ['items'] });
      expect(await fresh.next((m) => m.type === 'subscribed')).toMatchObject({
        boardId: anon.projectId,
        role: 'member',
      });
      socket.ws.close();
      fresh.ws.close();
    });

    it('hands one anonymous board over with a claim nonce: link, preview, one of two claims, spent and expired nonces refused', async () => {
      const anon = await anonymousBoard();
      await anon.agent.post('/api/items', { title: 'waiting for a person' });
      const minted = await anon.agent.post(`/api/projects/${anon.projectId}/claim-nonce`);
      expect(minted.status, minted.text).toBe(201);
      const { nonce, link } = minted.body as { nonce: string; link: string };
      expect(link).toBe(`http://board.test/boards/${anon.projectId}/claim#${nonce}`);
      expect(await served.srv.store.claimNonces.get(sha256(nonce))).toMatchObject({ projectId: anon.projectId });

      const [a, b] = await Promise.all([signedUp(url()), signedUp(url())]);
      const preview = await a.client.post(`/api/projects/${anon.projectId}/claim`, { nonce, preview: true });
      expect(preview.status, preview.text).toBe(200);
      expect(preview.body).toMatchObject({
        claimed: false,
        project: null,
        board: { projectId: anon.projectId, name: 'Agent board', itemCount: 1, agentCount: 1 },
      });
      const other = await anonymousBoard();
      expectError(await a.client.post(`/api/projects/${other.projectId}/claim`, { nonce }), 400, 'INVALID_LINK_TOKEN');
      expectError(await a.client.post('/api/projects/bad%20id/claim', { nonce }), 400, 'INVALID_PROJECT_ID');
      expectError(await anon.agent.post(`/api/projects/${anon.projectId}/claim`, { nonce }), 401, 'UNAUTHENTICATED');

      const results = await Promise.all(
        [a, b].map((p) => p.client.post(`/api/boards/${anon.projectId}/claim`, { nonce })),
      );
      expect(statuses(results)).toEqual([200, 400]);
      expectError(
        results.find((r) => r.status === 400)!,
        400,
        'INVALID_LINK_TOKEN',
      );
      const won = results.find((r) => r.status === 200)!;
      expect(won.body).toMatchObject({
        claimed: true,
        board: { projectId: anon.projectId, itemCount: 1 },
        project: { projectId: anon.projectId, owned: true, role: 'owner', itemCount: 1 },
      });
      const winner = results[0]!.status === 200 ? a : b;
      const loser = winner === a ? b : a;
      expect((await winner.client.get(`/api/status?projectId=${anon.projectId}`)).status).toBe(200);
      expectError(await loser.client.get(`/api/status?projectId=${anon.projectId}`), 403, 'PROJECT_SCOPE_DENIED');
      expect((await anon.agent.post('/api/items', { title: 'still working' })).status).toBe(201);
      expect(await served.srv.store.accounts.get(anon.accountId)).toBeNull();
      // The board now belongs to a person: no more claim links, and the old claim secret is dead.
      expectError(await anon.agent.post(`/api/boards/${anon.projectId}/claim-nonce`), 409, 'BOARD_NOT_ANONYMOUS');
      expectError(
        await loser.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.claimSecret }),
        400,
        'INVALID_LINK_TOKEN',
      );

      // Claim links are for anonymous boards, from their own credentials only; and they expire.
      const board = await newBoard(url());
      expectError(await board.owner.post(`/api/projects/${board.projectId}/claim-nonce`), 409, 'BOARD_NOT_ANONYMOUS');
      expectError(
        await (await board.agent('w')).post(`/api/projects/${board.projectId}/claim-nonce`),
        409,
        'BOARD_NOT_ANONYMOUS',
      );
      expectError(await other.agent.post(`/api/projects/${anon.projectId}/claim-nonce`), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await board.owner.post(`/api/projects/${other.projectId}/claim-nonce`), 403, 'PROJECT_SCOPE_DENIED');
      await served.srv.store.members.insert({
        _id: `${board.projectId}:${a.accountId}`,
        version: 1,
        projectId: board.projectId,
        accountId: a.accountId,
        role: 'admin',
        acceptedAt: Date.now(),
      });
      expectError(await a.client.post(`/api/projects/${board.projectId}/claim-nonce`), 403, 'ROLE_REQUIRED');
      const late = (await other.agent.post(`/api/projects/${other.projectId}/claim-nonce`, {})).body.nonce as string;
      served.srv.advance(15 * 60_000 + 1000);
      expectError(
        await a.client.post(`/api/projects/${other.projectId}/claim`, { nonce: late }),
        400,
        'INVALID_LINK_TOKEN',
      );
      expectError(
        await a.client.post(`/api/projects/${other.projectId}/claim`, { nonce: late, preview: true }),
        400,
        'INVALID_LINK_TOKEN',
      );
    });

    it('keeps at most 5 live claim links per board: a sixth replaces the oldest', async () => {
      const anon = await anonymousBoard();
      const nonces: string[] = [];
      for (let i = 0; i < 7; i++) {
        const minted = await anon.agent.post(`/api/projects/${anon.projectId}/claim-nonce`);
        expect(minted.status, minted.text).toBe(201);
        nonces.push(minted.body.nonce as string);
        served.srv.advance(1_000);
      }
      expect(await served.srv.store.claimNonces.count({ projectId: anon.projectId })).toBe(5);
      const person = await signedUp(url());
      const preview = (nonce: string) =>
        person.client.post(`/api/projects/${anon.projectId}/claim`, { nonce, preview: true });
      for (const replaced of nonces.slice(0, 2)) expectError(await preview(replaced), 400, 'INVALID_LINK_TOKEN');
      for (const live of nonces.slice(2)) expect((await preview(live)).status).toBe(200);
    });

    it('keeps a person within their board limit, moving nothing when it would be passed', async () => {
      const anon = await anonymousBoard();
      const nonce = (await anon.agent.post(`/api/projects/${anon.projectId}/claim-nonce`)).body.nonce as string;
      const person = await signedUp(url());
      const extra = [];
      for (const n of [2, 3])
        extra.push((await person.client.post('/api/projects', { name: `board ${n}` })).body.projectId as string);
      expectError(
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.claimSecret }),
        403,
        'FREE_PROJECT_LIMIT',
      );
      expectError(
        await person.client.post(`/api/projects/${anon.projectId}/claim`, { nonce, preview: true }),
        403,
        'FREE_PROJECT_LIMIT',
      );
      expectError(
        await person.client.post(`/api/projects/${anon.projectId}/claim`, { nonce }),
        403,
        'FREE_PROJECT_LIMIT',
      );
      expect((await served.srv.store.projects.get(anon.projectId))!.ownerId).toBe(anon.accountId);
      // With room made, the same nonce still works.
      expect((await person.client.request('DELETE', `/api/projects/${extra[0]}`)).status).toBe(204);
      const claimed = await person.client.post(`/api/projects/${anon.projectId}/claim`, { nonce });
      expect(claimed.status, claimed.text).toBe(200);
    });

    it('provisions a board with a token per agent for an account token, and refuses a workspace token', async () => {
      const { client: owner } = await signedUp(url());
      const issued = await owner.post('/api/accounts/tokens', { name: 'ci', scope: 'account' });
      const ci = bearer(url(), issued.body.secret);
      const projectName = unique('fleet');
      const made = await ci.post('/api/accounts/provision', { projectName, agents: ['builder', 'verifier'] });
      expect(made.status, made.text).toBe(201);
      expect(made.body.project).toMatchObject({
        name: projectName,
        owned: true,
        role: 'owner',
        agentCount: 2,
        itemCount: 0,
      });
      expect(
        made.body.agents.map(
          (a: { token: { name: string; scope: string; projectId: string; role: string } }) => a.token,
        ),
      ).toEqual([
        expect.objectContaining({
          name: 'builder',
          scope: 'workspace',
          projectId: made.body.project.projectId,
          role: 'member',
        }),
        expect.objectContaining({
          name: 'verifier',
          scope: 'workspace',
          projectId: made.body.project.projectId,
          role: 'member',
        }),
      ]);
      const [builder, verifier] = made.body.agents.map((a: { secret: string }) => bearer(url(), a.secret)) as Client[];
      expect((await builder!.post('/api/items', { title: 'build it' })).status).toBe(201);
      expect((await verifier!.get('/api/status')).body.counts.ready).toBe(1);
      expect((await owner.get('/api/projects')).body.projects.map((p: { name: string }) => p.name)).toContain(
        projectName,
      );

      expectError(
        await builder!.post('/api/accounts/provision', { projectName: 'nope', agents: ['x'] }),
        403,
        'PROJECT_SCOPE_DENIED',
      );
      expectError(
        await ci.post('/api/accounts/provision', { projectName: '', agents: [] }),
        400,
        'INVALID_PROJECT_NAME',
      );
      expectError(
        await ci.post('/api/accounts/provision', {
          projectName: 'x',
          agents: Array.from({ length: 51 }, (_, i) => `a${i}`),
        }),
        400,
        'INVALID_INPUT',
      );
      expectError(await ci.post('/api/accounts/provision', { projectName: 'x', agents: [''] }), 400, 'INVALID_INPUT');
      expectError(
        await ci.post('/api/accounts/provision', { projectName: 'x', agents: ['zero\u200bwidth'] }),
        400,
        'INVALID_INPUT',
      );
      expect((await ci.post('/api/accounts/provision', { projectName: 'third', agents: [] })).status).toBe(201);
      expectError(
        await ci.post('/api/accounts/provision', { projectName: 'fourth', agents: ['x'] }),
        403,
        'FREE_PROJECT_LIMIT',
      );
    });
  });
}
