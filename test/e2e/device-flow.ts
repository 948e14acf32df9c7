// The device flow (RFC 8628) over real HTTP, run on each store adapter: an agent with no credential
// starts, polls, and receives its token exactly once after a person approves.
import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { deriveKeys } from '../../src/auth/keys.js';
import { sha256 } from '../../src/auth/authenticator.js';
import { DEVICE_MISSES_PER_HOUR } from '../../src/accounts/device-flow.js';
import { revokeIssued, type RevokedIssued } from '../../src/accounts/credentials.js';
import { DEVICE_GRANTS_KEPT_MS as PURGE_AFTER_MS, purgeExpired } from '../../src/board/retention.js';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { failOnce, interposeOnce } from '../support/fail-once.js';
import { BUDGET_WINDOW_MS, Client, signedUp, TEST_SECRET, type Res } from '../support/server.js';
import { unique } from '../support/temp.js';

const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

export function deviceFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`device flow on the ${name} store`, () => {
    // Signups and polls all come from 127.0.0.1: the per-address budget is the last suite's subject.
    const served = serveStore(open, { ADDRESS_RATE_PER_MINUTE: '100000' });
    const agent = () => new Client(served.srv.url);
    const start = async (clientName = unique('agent'), projectId?: string) => {
      const res = await agent().post('/api/auth/device/start', { clientName, ...(projectId ? { projectId } : {}) });
      expect(res.status, res.text).toBe(200);
      return {
        ...(res.body as {
          deviceCode: string;
          userCode: string;
          verificationUri: string;
          verificationUriComplete: string;
          interval: number;
          expiresIn: number;
        }),
        clientName,
      };
    };
    const poll = (deviceCode: string): Promise<Res> => agent().post('/api/auth/device/poll', { deviceCode });
    const approve = (person: Client, userCode: string, projectId: string, yes = true): Promise<Res> =>
      person.post('/api/auth/device/approve', { userCode, projectId, approve: yes });

    it('polls pending, slows a fast poller down, and after an approval over HTTP hands out one working token', async () => {
      const board = await newBoard(served.srv.url);
      const grant = await start('builder-7', board.projectId);
      expect(grant).toMatchObject({
        userCode: expect.stringMatching(USER_CODE),
        verificationUri: 'http://board.test/device',
        interval: 5,
        expiresIn: 600,
      });
      expect(grant.verificationUriComplete).toBe(`http://board.test/device?code=${grant.userCode}`);
      expect(grant.deviceCode.length).toBeGreaterThanOrEqual(43);
      // Neither code is stored: the device code as its sha256 (the grant's id), the user code as an
      // HMAC under the server's key, since the plain sha256 of ~34 bits reverses offline in seconds.
      const typedCode = grant.userCode.replace('-', '');
      const stored = await served.srv.store.deviceGrants.get(sha256(grant.deviceCode));
      expect(stored).toMatchObject({
        status: 'pending',
        clientName: 'builder-7',
        projectId: board.projectId,
        userCodeHash: createHmac('sha256', deriveKeys(TEST_SECRET).userCode).update(typedCode).digest('hex'),
      });
      expect(stored!.userCodeHash).not.toBe(sha256(typedCode));
      expect(JSON.stringify(stored)).not.toContain(grant.deviceCode);
      expect(JSON.stringify(stored)).not.toContain(typedCode);

      const pending = await poll(grant.deviceCode);
      expectError(pending, 400, 'AUTHORIZATION_PENDING');
      expect(pending.body.error.details).toMatchObject({ interval: 5 });
      const fast = await poll(grant.deviceCode);
      expectError(fast, 400, 'SLOW_DOWN');
      expect(fast.body.error.details).toMatchObject({ interval: 10 });
      served.srv.advance(5_000); // the old interval is no longer enough for this grant
      const stillFast = await poll(grant.deviceCode);
      expectError(stillFast, 400, 'SLOW_DOWN');
      expect(stillFast.body.error.details).toMatchObject({ interval: 15 });
      served.srv.advance(15_000);
      expectError(await poll(grant.deviceCode), 400, 'AUTHORIZATION_PENDING');

      // The page's look-up, then the approval, with the code typed in lower case and without its dash.
      const typed = grant.userCode.replace('-', '').toLowerCase();
      expect((await board.owner.get(`/api/auth/device/lookup?userCode=${typed}`)).body).toEqual({
        userCode: grant.userCode,
        clientName: 'builder-7',
        requestedProjectId: board.projectId,
        expiresAt: expect.any(String),
        tokenLifetimeDays: 90,
      });
      expect((await approve(board.owner, typed, board.projectId)).body).toEqual({
        status: 'approved',
        clientName: 'builder-7',
        projectId: board.projectId,
      });
      expectError(await approve(board.owner, grant.userCode, board.projectId), 404, 'DEVICE_CODE_NOT_FOUND'); // decided already

      const delivered = await poll(grant.deviceCode);
      expect(delivered.status, delivered.text).toBe(200);
      expect(delivered.body.token).toMatchObject({
        name: 'builder-7',
        scope: 'workspace',
        projectId: board.projectId,
        role: 'member',
      });
      expect(delivered.body.secret).toMatch(/^agb_/);
      expectError(await poll(grant.deviceCode), 400, 'INVALID_DEVICE_CODE'); // exactly once
      // It works for 90 days from its delivery (DEVICE_TOKEN_DAYS), and its approver extends it as any token they issued.
      const ninetyDays = served.srv.now() + 90 * 86_400_000;
      expect(Math.abs(Date.parse(delivered.body.token.expiresAt) - ninetyDays)).toBeLessThan(60_000);
      const later = new Date(ninetyDays + 30 * 86_400_000).toISOString();
      const extended = await board.owner.request('PATCH', `/api/accounts/tokens/${delivered.body.token.id}`, {
        json: { expiresAt: later },
      });
      expect(extended.status, extended.text).toBe(200);
      expect(Date.parse(extended.body.token.expiresAt)).toBe(Date.parse(later));

      const token = new Client(served.srv.url, { authorization: `Bearer ${delivered.body.secret}` });
      expect((await token.get('/api/whoami')).body).toMatchObject({
        principal: `agent:${delivered.body.token.agentId}`,
        workspace: { projectId: board.projectId },
      });
      const item = await token.post('/api/items', { title: 'made by a device-flow agent' });
      expect(item.status, item.text).toBe(201);
      expect(
        (await board.owner.get('/api/accounts/tokens')).body.tokens.map((t: { name: string }) => t.name),
      ).toContain('builder-7');
      // No secret at rest: the grant keeps no token, the token only its hash.
      const rest = JSON.stringify([
        await served.srv.store.deviceGrants.get(sha256(grant.deviceCode)),
        await served.srv.store.tokens.get(delivered.body.token.id),
      ]);
      expect(rest).not.toContain(delivered.body.secret);
      expect(
        (await served.srv.store.audit.find({ projectId: board.projectId, action: 'device.approved' })).map(
          (r) => r.data,
        ),
      ).toEqual([
        {
          clientName: 'builder-7',
          requestedProjectId: board.projectId,
          requestId: expect.any(String),
          address: '127.0.0.1',
        },
      ]);
    });

    it('refuses a denied code with ACCESS_DENIED, every time', async () => {
      const board = await newBoard(served.srv.url);
      const grant = await start();
      expect((await approve(board.owner, grant.userCode, board.projectId, false)).body).toMatchObject({
        status: 'denied',
      });
      expectError(await poll(grant.deviceCode), 400, 'ACCESS_DENIED');
      expectError(await poll(grant.deviceCode), 400, 'ACCESS_DENIED');
      expect(await served.srv.store.tokens.count({ name: grant.clientName })).toBe(0);
      // A caller reusing its X-Request-Id still gets each decision recorded (the audit row is not keyed by it).
      const again = await start();
      expect(
        (
          await board.owner.post(
            '/api/auth/device/approve',
            { userCode: again.userCode, projectId: board.projectId, approve: false },
            { 'x-request-id': 'same-id' },
          )
        ).status,
      ).toBe(200);
      const third = await start();
      expect(
        (
          await board.owner.post(
            '/api/auth/device/approve',
            { userCode: third.userCode, projectId: board.projectId, approve: false },
            { 'x-request-id': 'same-id' },
          )
        ).status,
      ).toBe(200);
      expect(await served.srv.store.audit.count({ projectId: board.projectId, action: 'device.denied' })).toBe(3);
    });

    it('delivers on the next poll when minting the token failed (the grant is not stranded)', async () => {
      const board = await newBoard(served.srv.url);
      const grant = await start();
      await approve(board.owner, grant.userCode, board.projectId);
      failOnce(served.srv.store.tokens, 'insert');
      expectError(await poll(grant.deviceCode), 503, 'AUTH_UNAVAILABLE');
      expect(await served.srv.store.deviceGrants.get(sha256(grant.deviceCode))).toMatchObject({ status: 'approved' });
      const delivered = await poll(grant.deviceCode);
      expect(delivered.status, delivered.text).toBe(200);
      expect(delivered.body.token).toMatchObject({
        name: grant.clientName,
        projectId: board.projectId,
        role: 'member',
      });
      expectError(await poll(grant.deviceCode), 400, 'INVALID_DEVICE_CODE');
      expect(await served.srv.store.tokens.count({ name: grant.clientName })).toBe(1);
    });

    it('sends no token out when the grant cannot be marked delivered: it is revoked, and the next poll delivers another', async () => {
      const board = await newBoard(served.srv.url);
      const grant = await start();
      await approve(board.owner, grant.userCode, board.projectId);
      interposeOnce(served.srv.store.tokens, 'insert', 'after', async () => {
        failOnce(served.srv.store.deviceGrants, 'update');
      });
      expectError(await poll(grant.deviceCode), 503, 'AUTH_UNAVAILABLE');
      expect(await served.srv.store.tokens.count({ name: grant.clientName, revoked: false })).toBe(0);
      expect(await served.srv.store.deviceGrants.get(sha256(grant.deviceCode))).toMatchObject({ status: 'approved' });
      const delivered = await poll(grant.deviceCode);
      expect(delivered.status, delivered.text).toBe(200);
      expect(
        (await served.srv.store.tokens.find({ name: grant.clientName, revoked: false })).map((t) => t._id),
      ).toEqual([delivered.body.token.id]);
    });

    it('gives two concurrent polls of an approved code exactly one token', async () => {
      const board = await newBoard(served.srv.url);
      for (let round = 0; round < 5; round++) {
        const grant = await start();
        await approve(board.owner, grant.userCode, board.projectId);
        const answers = await Promise.all([poll(grant.deviceCode), poll(grant.deviceCode), poll(grant.deviceCode)]);
        const won = answers.filter((a) => a.status === 200);
        expect(won, answers.map((a) => a.text).join('\n')).toHaveLength(1);
        for (const lost of answers.filter((a) => a.status !== 200)) expectError(lost, 400, 'INVALID_DEVICE_CODE');
        expect(await served.srv.store.tokens.count({ name: grant.clientName })).toBe(1);
      }
    });

    // A poll moves the grant on, then mints: the approver's revocation (a reset that proves the
    // address, an operator's revoke, a deletion) lands just before the token is stored, or just after.
    it.each(['before', 'after'] as const)(
      'lets no token out of a grant whose approver revokes all they issued while a poll mints it (%s the token is stored)',
      async (when) => {
        const board = await newBoard(served.srv.url);
        const ownerId = (await served.srv.store.projects.get(board.projectId))!.ownerId;
        const grant = await start();
        expect((await approve(board.owner, grant.userCode, board.projectId)).status).toBe(200);
        let revoked: RevokedIssued | undefined;
        interposeOnce(served.srv.store.tokens, 'insert', when, async () => {
          revoked = await revokeIssued(served.srv.store, ownerId, Date.now());
        });
        expectError(await poll(grant.deviceCode), 400, 'ACCESS_DENIED');
        expect(revoked).toMatchObject({ deviceGrants: 1 });
        expect(await served.srv.store.tokens.count({ name: grant.clientName, revoked: false })).toBe(0);
        expect(await served.srv.store.deviceGrants.get(sha256(grant.deviceCode))).toMatchObject({ status: 'denied' });
        expectError(await poll(grant.deviceCode), 400, 'ACCESS_DENIED');
      },
    );

    it('lets only an admin or owner of a reachable board approve, and checks the approver’s role again at delivery', async () => {
      const board = await newBoard(served.srv.url);
      const person = await signedUp(served.srv.url);
      const other = await newBoard(served.srv.url);
      const grant = await start();
      const member = {
        _id: `${board.projectId}:${person.accountId}`,
        version: 1,
        projectId: board.projectId,
        accountId: person.accountId,
        role: 'viewer' as const,
        acceptedAt: Date.now(),
      };
      await served.srv.store.members.insert(member);
      expectError(await approve(person.client, grant.userCode, board.projectId), 403, 'ROLE_REQUIRED');
      await served.srv.store.members.update(member._id, 1, { role: 'member' });
      expectError(await approve(person.client, grant.userCode, board.projectId), 403, 'ROLE_REQUIRED');
      expectError(await approve(person.client, grant.userCode, board.projectId, false), 403, 'ROLE_REQUIRED'); // denying needs the same right
      expectError(await approve(person.client, grant.userCode, other.projectId), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await approve(person.client, grant.userCode, 'no-such-board'), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await poll(grant.deviceCode), 400, 'AUTHORIZATION_PENDING'); // nothing decided

      // An admin may approve; the token is issued on the admin's behalf, on that board.
      await served.srv.store.members.update(member._id, 2, { role: 'admin' });
      expect((await approve(person.client, grant.userCode, board.projectId)).status).toBe(200);
      const delivered = await poll(grant.deviceCode);
      expect(delivered.body.token).toMatchObject({ projectId: board.projectId, role: 'member' });
      expect((await served.srv.store.tokens.get(delivered.body.token.id))!.accountId).toBe(person.accountId);

      // An approver demoted between the approval and the poll: the agent hears a denial, and no token exists.
      const late = await start();
      expect((await approve(person.client, late.userCode, board.projectId)).status).toBe(200);
      await served.srv.store.members.update(member._id, 3, { role: 'member' });
      expectError(await poll(late.deviceCode), 400, 'ACCESS_DENIED');
      expectError(await poll(late.deviceCode), 400, 'ACCESS_DENIED');
      expect(await served.srv.store.tokens.count({ name: late.clientName })).toBe(0);
    });

    it('answers unknown, malformed and unauthenticated requests with their codes', async () => {
      const board = await newBoard(served.srv.url);
      const grant = await start();
      expectError(await approve(board.owner, 'BCDF-GHJK', board.projectId), 404, 'DEVICE_CODE_NOT_FOUND');
      expectError(await approve(board.owner, 'AEIO-UAEI', board.projectId), 404, 'DEVICE_CODE_NOT_FOUND'); // letters the codes never use
      expectError(await board.owner.get('/api/auth/device/lookup?userCode=BCDF-GHJK'), 404, 'DEVICE_CODE_NOT_FOUND');
      expectError(await approve(board.owner, '1234-5678', board.projectId), 400, 'INVALID_INPUT');
      expectError(await poll('not-a-device-code'), 400, 'INVALID_DEVICE_CODE');
      expectError(await poll('x'.repeat(129)), 400, 'INVALID_INPUT');
      expectError(await agent().post('/api/auth/device/start', { clientName: 'bad\u202ename' }), 400, 'INVALID_INPUT');
      expectError(
        await agent().post('/api/auth/device/start', { clientName: 'a', scope: 'account' }),
        400,
        'INVALID_INPUT',
      );
      expectError(
        await agent().post('/api/auth/device/approve', {
          userCode: grant.userCode,
          projectId: board.projectId,
          approve: true,
        }),
        401,
        'UNAUTHENTICATED',
      );
      expectError(
        await board.owner.post(
          '/api/auth/device/approve',
          { userCode: grant.userCode, projectId: board.projectId, approve: true },
          { 'x-csrf-token': 'forged' },
        ),
        403,
        'CSRF_REJECTED',
      );
      expectError(await agent().get(`/api/auth/device/lookup?userCode=${grant.userCode}`), 401, 'UNAUTHENTICATED');
      expectError(await poll(grant.deviceCode), 400, 'AUTHORIZATION_PENDING'); // none of that touched the grant
    });

    it('expires a code after 600 s (EXPIRED_TOKEN, no longer approvable) and retention purges it an hour later', async () => {
      const board = await newBoard(served.srv.url);
      const grant = await start();
      served.srv.advance(599_000);
      expectError(await poll(grant.deviceCode), 400, 'AUTHORIZATION_PENDING');
      served.srv.advance(1_000);
      expectError(await poll(grant.deviceCode), 400, 'EXPIRED_TOKEN');
      expectError(await approve(board.owner, grant.userCode, board.projectId), 404, 'DEVICE_CODE_NOT_FOUND');
      expectError(
        await board.owner.get(`/api/auth/device/lookup?userCode=${grant.userCode}`),
        404,
        'DEVICE_CODE_NOT_FOUND',
      );
      // Retention's purge (the server runs it every 10 minutes) keeps it for an hour past its expiry, then deletes it.
      const { store } = served.srv;
      const { expiresAt } = (await store.deviceGrants.get(sha256(grant.deviceCode)))!;
      await purgeExpired(store, expiresAt + PURGE_AFTER_MS); // (earlier tests' grants may go)
      expect(await store.deviceGrants.get(sha256(grant.deviceCode))).not.toBeNull();
      expect((await purgeExpired(store, expiresAt + PURGE_AFTER_MS + 1)).deviceGrants).toBeGreaterThanOrEqual(1);
      expect(await store.deviceGrants.get(sha256(grant.deviceCode))).toBeNull();
      expectError(await poll(grant.deviceCode), 400, 'INVALID_DEVICE_CODE');
    });

    it(`refuses an account that got ${DEVICE_MISSES_PER_HOUR} user codes wrong within the hour, right codes too, until the hour turns; other accounts go on`, async () => {
      // The budget is a fixed hour window: the test holds one from its start.
      served.srv.holdBudgets(3_600_000);
      const board = await newBoard(served.srv.url);
      const other = await newBoard(served.srv.url);
      const grant = await start();
      for (let i = 0; i < DEVICE_MISSES_PER_HOUR; i++) {
        const wrong =
          i % 2
            ? board.owner.get('/api/auth/device/lookup?userCode=BCDF-GHJK')
            : approve(board.owner, 'BCDF-GHJK', board.projectId);
        expectError(await wrong, 404, 'DEVICE_CODE_NOT_FOUND');
      }
      const refused = await board.owner.get(`/api/auth/device/lookup?userCode=${grant.userCode}`);
      expectError(refused, 429, 'RATE_LIMITED');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
      expectError(await approve(board.owner, grant.userCode, board.projectId), 429, 'RATE_LIMITED');
      expectError(await poll(grant.deviceCode), 400, 'AUTHORIZATION_PENDING'); // nothing decided
      // Right codes do not count: another account looks it up as often as it likes.
      for (let i = 0; i < DEVICE_MISSES_PER_HOUR + 1; i++)
        expect((await other.owner.get(`/api/auth/device/lookup?userCode=${grant.userCode}`)).status).toBe(200);
      served.srv.advance(3_600_000);
      const later = await start(); // the first expired meanwhile (10 minutes)
      expect((await approve(board.owner, later.userCode, board.projectId)).status).toBe(200);
    });

    describe('per-address budgets: polls have their own, four times the address budget (120 a minute by default)', () => {
      const limited = serveStore(open);

      it('lets six agents behind one address poll at the interval, refuses a faster caller with 429, and leaves start its own budget', async () => {
        const advance = (ms: number) => limited.srv.advance(ms);
        const client = new Client(limited.srv.url);
        limited.srv.holdBudgets();
        const agents = [];
        for (let i = 0; i < 6; i++)
          agents.push(
            (await client.post('/api/auth/device/start', { clientName: `patient-${i}` })).body.deviceCode as string,
          );
        for (let round = 0; round < 11; round++) {
          advance(5_000);
          for (const deviceCode of agents)
            expectError(await client.post('/api/auth/device/poll', { deviceCode }), 400, 'AUTHORIZATION_PENDING');
        }
        advance(BUDGET_WINDOW_MS); // a fresh window for the fast polls
        let refused: Res | null = null;
        for (let i = 0; i < 121 && !refused; i++) {
          const res = await client.post('/api/auth/device/poll', { deviceCode: agents[0] });
          if (res.status === 429) refused = res;
          else
            expect([res.status, res.body.error.code]).toEqual([
              400,
              i === 0 ? expect.stringMatching(/^(SLOW_DOWN|AUTHORIZATION_PENDING)$/) : 'SLOW_DOWN',
            ]);
        }
        expect(refused, 'no 429 within 121 fast polls').not.toBeNull();
        expectError(refused!, 429, 'RATE_LIMITED');
        expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
        // Spent polls leave the address budget (start, signup, login) alone, and it has its own end.
        expect((await client.post('/api/auth/device/start', { clientName: 'another' })).status).toBe(200);
        let startRefused: Res | null = null;
        for (let i = 0; i < 31 && !startRefused; i++) {
          const res = await client.post('/api/auth/device/start', { clientName: `burst-${i}` });
          if (res.status === 429) startRefused = res;
        }
        expectError(startRefused!, 429, 'RATE_LIMITED');
        advance(60_000);
        expect((await client.post('/api/auth/device/start', { clientName: 'later' })).status).toBe(200);
      });

      it('puts looking up and approving user codes on the address budget sign-up draws on, so codes cannot be guessed by the thousand', async () => {
        limited.srv.holdBudgets();
        // Three sign-ups (three of the 30), so no account reaches its own budget of misses (10 an hour).
        const boards = [
          await newBoard(limited.srv.url),
          await newBoard(limited.srv.url),
          await newBoard(limited.srv.url),
        ];
        const guess = (i: number) => {
          const board = boards[i % 3]!;
          return i % 2
            ? board.owner.get('/api/auth/device/lookup?userCode=BCDF-GHJK')
            : approve(board.owner, 'BCDF-GHJK', board.projectId);
        };
        for (let i = 0; i < 27; i++) expectError(await guess(i), 404, 'DEVICE_CODE_NOT_FOUND');
        const refused = await guess(27);
        expectError(refused, 429, 'RATE_LIMITED');
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        expectError(await guess(28), 429, 'RATE_LIMITED');
        expectError(
          await new Client(limited.srv.url).post('/api/auth/signup', {
            email: `${unique('late')}@example.com`,
            password: 'correct horse battery staple',
          }),
          429,
          'RATE_LIMITED',
        );
        limited.srv.advance(60_000);
        expectError(await guess(0), 404, 'DEVICE_CODE_NOT_FOUND');
      });
    });
  });
}
