// Revoking one enrollment code over real HTTP, run on each store adapter: codes listed by id (never
// the code itself), revoked by whoever may mint the board's codes, and no token from a code once
// its revoke answered, a redemption under way included (each interleaving driven, and raced).
import { describe, expect, it } from 'vitest';
import { revokeIssued, type RevokedIssued } from '../../src/accounts/credentials.js';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { interposeOnce } from '../support/fail-once.js';
import { Client, signedUp, type Res } from '../support/server.js';
import { unique } from '../support/temp.js';
import { bearer, sha256 } from '../support/onboarding.js';

interface Minted {
  id: string;
  code: string;
}

export function enrollmentRevokeFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`revoking enrollment codes on the ${name} store`, { timeout: 90_000 }, () => {
    const served = serveStore(open, { ADDRESS_RATE_PER_MINUTE: '100000' });
    const url = () => served.srv.url;
    const codes = (base: string, projectId: string) => `${base}/${projectId}/agents/enroll`;
    const mint = async (by: Client, projectId: string, body: object, base = '/api/projects'): Promise<Minted> => {
      const res = await by.post(codes(base, projectId), { ttlSeconds: 600, ...body });
      expect(res.status, res.text).toBe(201);
      return res.body as Minted;
    };
    const revoke = (by: Client, projectId: string, id: string, base = '/api/projects'): Promise<Res> =>
      by.request('DELETE', `${codes(base, projectId)}/${id}`);
    const enroll = (code: string, agent: string): Promise<Res> =>
      new Client(url()).post('/api/projects/enroll', { code, name: agent });
    const liveTokens = (agent: string) => served.srv.store.tokens.count({ name: agent, revoked: false });

    it('lists a board’s live codes by id, never the code, and revokes one: it enrolls nobody after, and is gone', async () => {
      const board = await newBoard(url());
      const first = await mint(board.owner, board.projectId, { uses: 3 });
      const second = await mint(board.owner, board.projectId, { uses: 1, role: 'viewer' });
      expect(first.id).toBe(sha256(first.code));
      expect((await enroll(first.code, unique('before'))).status).toBe(201);

      const listed = await board.owner.get(codes('/api/projects', board.projectId));
      expect(listed.status, listed.text).toBe(200);
      expect(listed.body.codes).toEqual([
        { id: second.id, role: 'viewer', usesLeft: 1, createdAt: expect.any(String), expiresAt: expect.any(String) },
        { id: first.id, role: 'member', usesLeft: 2, createdAt: expect.any(String), expiresAt: expect.any(String) },
      ]);
      expect(listed.text).not.toContain('agb_enroll_');

      expect((await revoke(board.owner, board.projectId, first.id)).status).toBe(204);
      const late = unique('late');
      expectError(await enroll(first.code, late), 400, 'INVALID_LINK_TOKEN');
      expect(await served.srv.store.tokens.count({ name: late })).toBe(0);
      expectError(await revoke(board.owner, board.projectId, first.id), 404, 'ENROLLMENT_CODE_NOT_FOUND');
      expect((await board.owner.get(codes('/api/boards', board.projectId))).body.codes).toEqual([
        expect.objectContaining({ id: second.id }),
      ]);

      // Unknown, spent and expired codes are not found either; the /api/boards twin revokes too.
      expectError(await revoke(board.owner, board.projectId, sha256('never minted')), 404, 'ENROLLMENT_CODE_NOT_FOUND');
      expect((await enroll(second.code, unique('last-use'))).status).toBe(201);
      expectError(await revoke(board.owner, board.projectId, second.id), 404, 'ENROLLMENT_CODE_NOT_FOUND');
      const short = await mint(board.owner, board.projectId, { uses: 1, ttlSeconds: 60 });
      served.srv.advance(61_000);
      expectError(await revoke(board.owner, board.projectId, short.id), 404, 'ENROLLMENT_CODE_NOT_FOUND');
      const twin = await mint(board.owner, board.projectId, { uses: 1 }, '/api/boards');
      expect((await revoke(board.owner, board.projectId, twin.id, '/api/boards')).status).toBe(204);
      expectError(await enroll(twin.code, unique('twin')), 400, 'INVALID_LINK_TOKEN');
      expect((await board.owner.get(codes('/api/projects', board.projectId))).body.codes).toEqual([]);
    });

    it('audits minting and revoking a code: who, which board, the code’s id, never the code', async () => {
      const board = await newBoard(url());
      const minted = await board.owner.post(
        codes('/api/projects', board.projectId),
        { uses: 2, ttlSeconds: 600 },
        { 'x-request-id': 'req-enroll-mint' },
      );
      expect(minted.status, minted.text).toBe(201);
      const { id, code } = minted.body as Minted;
      const revoked = await board.owner.request('DELETE', `${codes('/api/projects', board.projectId)}/${id}`, {
        headers: { 'x-request-id': 'req-enroll-revoke' },
      });
      expect(revoked.status, revoked.text).toBe(204);
      const rows = await served.srv.store.audit.find({ projectId: board.projectId });
      const of = (action: string) => rows.filter((r) => r.action === action);
      expect(of('enrollment.mint')).toEqual([
        expect.objectContaining({
          actor: expect.stringMatching(/^user:/),
          target: `enrollment:${id}`,
          data: expect.objectContaining({ codeId: id, role: 'member', uses: 2, requestId: 'req-enroll-mint' }),
        }),
      ]);
      expect(of('enrollment.revoke')).toEqual([
        expect.objectContaining({
          actor: of('enrollment.mint')[0]!.actor,
          target: `enrollment:${id}`,
          data: expect.objectContaining({ codeId: id, requestId: 'req-enroll-revoke' }),
        }),
      ]);
      expect(JSON.stringify(rows)).not.toContain(code);
      expect(JSON.stringify(rows)).not.toContain('agb_enroll_');
    });

    it('lets whoever may mint the board’s codes revoke any of them, and nobody else', async () => {
      const board = await newBoard(url());
      const code = await mint(board.owner, board.projectId, { uses: 5 });
      const other = await newBoard(url());
      expectError(await revoke(other.owner, board.projectId, code.id), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await revoke(other.owner, other.projectId, code.id), 404, 'ENROLLMENT_CODE_NOT_FOUND');
      const worker = await board.agent('worker');
      expectError(await revoke(worker, board.projectId, code.id), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await worker.get(codes('/api/projects', board.projectId)), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await revoke(board.owner, 'not%20an%20id', code.id), 400, 'INVALID_PROJECT_ID');

      // Memberships inserted directly (sharing is another module): a member may not, an admin may.
      const join = async (role: 'member' | 'admin') => {
        const person = await signedUp(url());
        await served.srv.store.members.insert({
          _id: `${board.projectId}:${person.accountId}`,
          version: 1,
          projectId: board.projectId,
          accountId: person.accountId,
          role,
          acceptedAt: Date.now(),
        });
        return person.client;
      };
      const member = await join('member');
      expectError(await revoke(member, board.projectId, code.id), 403, 'ROLE_REQUIRED');
      expectError(await member.get(codes('/api/projects', board.projectId)), 403, 'ROLE_REQUIRED');
      expect((await enroll(code.code, unique('still-good'))).status).toBe(201);
      const admin = await join('admin');
      expect((await admin.get(codes('/api/projects', board.projectId))).body.codes).toHaveLength(1);
      expect((await revoke(admin, board.projectId, code.id)).status).toBe(204);

      // An account-scoped token of the owner mints, lists and revokes as the owner does.
      const account = await board.owner.post('/api/accounts/tokens', { name: unique('automation'), scope: 'account' });
      const automation = bearer(url(), account.body.secret);
      const byOwner = await mint(board.owner, board.projectId, { uses: 1 });
      expect((await automation.get(codes('/api/projects', board.projectId))).body.codes).toHaveLength(1);
      expect((await revoke(automation, board.projectId, byOwner.id)).status).toBe(204);
    });

    // A redemption takes a use, then mints: the revoke lands just before its token is stored, or just after.
    it.each(['before', 'after'] as const)(
      'gives no token from a code revoked while a redemption mints it (%s the token is stored)',
      async (when) => {
        const board = await newBoard(url());
        const code = await mint(board.owner, board.projectId, { uses: 2 });
        let revoked: Res | undefined;
        interposeOnce(served.srv.store.tokens, 'insert', when, async () => {
          revoked = await revoke(board.owner, board.projectId, code.id);
        });
        const agent = unique('racer');
        expectError(await enroll(code.code, agent), 400, 'INVALID_LINK_TOKEN');
        expect(revoked?.status).toBe(204);
        expect(await liveTokens(agent)).toBe(0);
        expectError(await enroll(code.code, unique('after')), 400, 'INVALID_LINK_TOKEN');
      },
    );

    it('settles a revoke racing a redemption of the last use for one of them: a token and 404, or 204 and 400', async () => {
      const board = await newBoard(url());
      for (let round = 0; round < 6; round++) {
        const code = await mint(board.owner, board.projectId, { uses: 1 });
        const agent = unique('racer');
        const [enrolled, revoked] = await Promise.all([
          enroll(code.code, agent),
          revoke(board.owner, board.projectId, code.id),
        ]);
        if (revoked.status === 204) {
          expectError(enrolled, 400, 'INVALID_LINK_TOKEN');
          expect(await liveTokens(agent)).toBe(0);
        } else {
          expectError(revoked, 404, 'ENROLLMENT_CODE_NOT_FOUND');
          expect(enrolled.status, enrolled.text).toBe(201);
          expect((await bearer(url(), enrolled.body.secret).get('/api/whoami')).status).toBe(200);
        }
      }
    });

    // The same race with everything the code's maker issued: a reset that proves the address, an operator's revoke.
    it.each(['before', 'after'] as const)(
      'gives no token from a code whose maker’s issue is revoked while a redemption mints it (%s the token is stored)',
      async (when) => {
        const board = await newBoard(url());
        const ownerId = (await served.srv.store.projects.get(board.projectId))!.ownerId;
        const code = await mint(board.owner, board.projectId, { uses: 2 });
        let revoked: RevokedIssued | undefined;
        interposeOnce(served.srv.store.tokens, 'insert', when, async () => {
          revoked = await revokeIssued(served.srv.store, ownerId, Date.now());
        });
        const agent = unique('racer');
        expectError(await enroll(code.code, agent), 400, 'INVALID_LINK_TOKEN');
        expect(revoked).toMatchObject({ enrollments: 1 });
        expect(await liveTokens(agent)).toBe(0);
      },
    );
  });
}
