// Claims of anonymous boards under failure, over real HTTP on each store adapter: one store call
// fails part-way (test/support/fail-once.ts), and the claim must leave the board reachable, finish
// for its person alone (by retry or by the sweep), and never lose the board or its agents. Also
// the limits a claim checks first, the secret-vs-nonce race, and the 7-day sweep.
import { describe, expect, it } from 'vitest';
import { purgeAccount } from '../../src/accounts/service.js';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { expectError } from '../support/expect-error.js';
import { failOnce } from '../support/fail-once.js';
import { anonymousBoard as anonymousBoardAt, holdTokens, sha256 } from '../support/onboarding.js';
import { signedUp, type Res } from '../support/server.js';

const DAY = 86_400_000;
const statuses = (results: Res[]) => results.map((r) => r.status).sort();

export function claimRecoveryFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`claims of anonymous boards under failure on the ${name} store`, { timeout: 90_000 }, () => {
    // Every test here signs up from one address: the per-address budget is onboarding.test.ts's subject.
    const served = serveStore(open, { ADDRESS_RATE_PER_MINUTE: '100000' });
    const url = () => served.srv.url;
    const anonymousBoard = (body?: unknown) => anonymousBoardAt(url(), body);

    it('refuses a claim that would take the person past the 500 tokens an account holds, moving nothing', async () => {
      const { store } = served.srv;
      const anon = await anonymousBoard();
      const nonce = (await anon.agent.post(`/api/projects/${anon.projectId}/claim-nonce`)).body.nonce as string;
      const person = await signedUp(url());
      await holdTokens(store, person.accountId, 500);
      for (const refused of [
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.claimSecret }),
        await person.client.post(`/api/projects/${anon.projectId}/claim`, { nonce, preview: true }),
        await person.client.post(`/api/projects/${anon.projectId}/claim`, { nonce }),
      ]) {
        expectError(refused, 400, 'INVALID_INPUT');
        expect(refused.body.error.message).toMatch(/at most 500/);
      }
      expect(await store.projects.get(anon.projectId)).toMatchObject({ ownerId: anon.accountId });
      expect(await store.members.get(`${anon.projectId}:${person.accountId}`)).toBeNull();
      expect((await store.anonymousAccounts.get(anon.accountId))!.claim).toBeUndefined();
      expect(await store.tokens.count({ boardId: anon.projectId, accountId: anon.accountId })).toBe(1);
      // One token fewer, and the board and its agent's token fit.
      await store.tokens.delete((await store.tokens.findOne({ accountId: person.accountId }))!._id);
      const claimed = await person.client.post(`/api/projects/${anon.projectId}/claim`, { nonce });
      expect(claimed.status, claimed.text).toBe(200);
      expect(await store.tokens.count({ accountId: person.accountId })).toBe(500);
    });

    it('moves a board in an order that leaves it reachable when a claim is cut short, and never deletes its agents with the anonymous account', async () => {
      const { store } = served.srv;
      // The person's membership cannot be written: nothing else changed either.
      const first = await anonymousBoard();
      const person = await signedUp(url());
      failOnce(store.members, 'insert');
      expectError(
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: first.claimSecret }),
        503,
        'AUTH_UNAVAILABLE',
      );
      expect(await store.projects.get(first.projectId)).toMatchObject({ ownerId: first.accountId });
      expect((await first.agent.post('/api/items', { title: 'nothing moved' })).status).toBe(201);

      // The tokens cannot be moved: the person owns the board and reaches it, and its agent still works on it.
      const anon = await anonymousBoard();
      failOnce(store.tokens, 'update');
      expectError(
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.claimSecret }),
        503,
        'AUTH_UNAVAILABLE',
      );
      expect(await store.projects.get(anon.projectId)).toMatchObject({ ownerId: person.accountId });
      expect((await person.client.get(`/api/status?projectId=${anon.projectId}`)).status).toBe(200);
      expect((await anon.agent.post('/api/items', { title: 'while the claim is cut short' })).status).toBe(201);
      // Deleting the anonymous account meanwhile (as the sweep deletes one) spares the tokens of the board it handed over.
      await purgeAccount(store, anon.accountId);
      expect(await store.tokens.count({ boardId: anon.projectId })).toBe(1);
      // The person's retry with the same secret moves them: the agent works under the person's account.
      expect(
        (await person.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.claimSecret })).status,
      ).toBe(200);
      expect((await anon.agent.get('/api/whoami')).body).toMatchObject({
        principal: `agent:${anon.token.agentId}`,
        account: { id: person.accountId },
      });
    });

    it('lets the person whose claim was cut short finish it with the same secret or nonce, and nobody else', async () => {
      const { store } = served.srv;
      const [person, other] = await Promise.all([signedUp(url()), signedUp(url())]);
      // By secret: the claim was accepted, then the store failed as the tokens moved.
      const bySecret = await anonymousBoard();
      failOnce(store.tokens, 'update');
      expectError(
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: bySecret.claimSecret }),
        503,
        'AUTH_UNAVAILABLE',
      );
      expectError(
        await other.client.post('/api/accounts/claim-anonymous', { claimSecret: bySecret.claimSecret }),
        400,
        'INVALID_LINK_TOKEN',
      );
      expectError(await bySecret.agent.post(`/api/projects/${bySecret.projectId}/claim-nonce`), 403, 'ROLE_REQUIRED'); // its account no longer owns it
      const finished = await person.client.post('/api/accounts/claim-anonymous', { claimSecret: bySecret.claimSecret });
      expect(finished.status, finished.text).toBe(200);
      expect(finished.body.projects).toEqual([
        expect.objectContaining({ projectId: bySecret.projectId, owned: true, role: 'owner', agentCount: 1 }),
      ]);
      expect((await bySecret.agent.get('/api/whoami')).body).toMatchObject({ account: { id: person.accountId } });
      expect(await store.anonymousAccounts.get(bySecret.accountId)).toBeNull();
      expect(await store.accounts.get(bySecret.accountId)).toBeNull();
      expectError(
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: bySecret.claimSecret }),
        400,
        'INVALID_LINK_TOKEN',
      ); // done: spent

      // By nonce: the store failed as the anonymous account let go of the board.
      const byNonce = await anonymousBoard();
      const nonce = (await byNonce.agent.post(`/api/projects/${byNonce.projectId}/claim-nonce`)).body.nonce as string;
      failOnce(store.members, 'delete');
      expectError(
        await person.client.post(`/api/projects/${byNonce.projectId}/claim`, { nonce }),
        503,
        'AUTH_UNAVAILABLE',
      );
      expectError(
        await other.client.post(`/api/projects/${byNonce.projectId}/claim`, { nonce }),
        400,
        'INVALID_LINK_TOKEN',
      );
      expectError(
        await other.client.post('/api/accounts/claim-anonymous', { claimSecret: byNonce.claimSecret }),
        400,
        'INVALID_LINK_TOKEN',
      );
      expect((await byNonce.agent.post('/api/items', { title: 'still working' })).status).toBe(201);
      const again = await person.client.post(`/api/projects/${byNonce.projectId}/claim`, { nonce });
      expect(again.status, again.text).toBe(200);
      expect(again.body).toMatchObject({
        claimed: true,
        project: { projectId: byNonce.projectId, owned: true, role: 'owner', itemCount: 1 },
      });
      expect(await store.members.get(`${byNonce.projectId}:${byNonce.accountId}`)).toBeNull();
      expect(await store.anonymousAccounts.get(byNonce.accountId)).toBeNull();
      expectError(
        await person.client.post(`/api/projects/${byNonce.projectId}/claim`, { nonce }),
        400,
        'INVALID_LINK_TOKEN',
      ); // done: spent
      expect((await other.client.get(`/api/status?projectId=${byNonce.projectId}`)).status).toBe(403);
    });

    it('gives an anonymous board to exactly one of a claim by secret and a claim by nonce racing for it', async () => {
      const { store } = served.srv;
      for (let round = 0; round < 3; round++) {
        const anon = await anonymousBoard();
        const nonce = (await anon.agent.post(`/api/projects/${anon.projectId}/claim-nonce`)).body.nonce as string;
        const [bySecret, byNonce] = await Promise.all([signedUp(url()), signedUp(url())]);
        const results = await Promise.all([
          bySecret.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.claimSecret }),
          byNonce.client.post(`/api/projects/${anon.projectId}/claim`, { nonce }),
        ]);
        expect(statuses(results), results.map((r) => r.text).join('\n')).toEqual([200, 400]);
        expectError(
          results.find((r) => r.status === 400)!,
          400,
          'INVALID_LINK_TOKEN',
        );
        const [winner, loser] = results[0]!.status === 200 ? [bySecret, byNonce] : [byNonce, bySecret];
        expect(await store.projects.get(anon.projectId)).toMatchObject({ ownerId: winner.accountId });
        expect(await store.members.get(`${anon.projectId}:${loser.accountId}`)).toBeNull();
        expect(await store.tokens.count({ boardId: anon.projectId, accountId: winner.accountId })).toBe(1);
        expect(await store.anonymousAccounts.get(anon.accountId)).toBeNull();
        expect((await anon.agent.get('/api/status')).status).toBe(200);
      }
    });

    it('retires the anonymous account a claim emptied with its record last, so a failure part-way leaves it for the sweep', async () => {
      const { store } = served.srv;
      const anon = await anonymousBoard();
      const person = await signedUp(url());
      failOnce(store.accounts, 'delete'); // the account itself, the last thing purgeAccount deletes
      expectError(
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: anon.claimSecret }),
        503,
        'AUTH_UNAVAILABLE',
      );
      expect(await store.projects.get(anon.projectId)).toMatchObject({ ownerId: person.accountId });
      expect(await store.accounts.get(anon.accountId)).not.toBeNull();
      expect(await store.anonymousAccounts.get(anon.accountId)).not.toBeNull(); // still findable
      served.srv.advance(8 * DAY);
      await served.srv.server.sweepAnonymous();
      expect(await store.accounts.get(anon.accountId)).toBeNull();
      expect(await store.anonymousAccounts.get(anon.accountId)).toBeNull();
      expect(await store.projects.get(anon.projectId)).toMatchObject({ ownerId: person.accountId });
      expect((await anon.agent.post('/api/items', { title: 'the board is the person’s' })).status).toBe(201);
    });

    it('deletes anonymous accounts left unclaimed for 7 days, and finishes for its person a claim cut short', async () => {
      const { store } = served.srv;
      const left = await anonymousBoard();
      const kept = await anonymousBoard();
      await left.agent.post('/api/items', { title: 'nobody came' });
      await kept.agent.post('/api/items', { title: 'somebody came' });
      const person = await signedUp(url());
      // The claim was accepted and cut short (the tokens did not move), and the person never came back.
      failOnce(store.tokens, 'update');
      expectError(
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: kept.claimSecret }),
        503,
        'AUTH_UNAVAILABLE',
      );
      expect(await store.anonymousAccounts.get(kept.accountId)).toMatchObject({
        claim: { by: person.accountId, boards: [kept.projectId] },
      });
      const code = (
        await person.client.post(`/api/projects/${kept.projectId}/agents/enroll`, { uses: 1, ttlSeconds: 3600 })
      ).body.code as string;

      served.srv.advance(6 * DAY);
      expect((await served.srv.server.sweepAnonymous()).accounts).not.toContain(left.accountId);
      expect((await left.agent.get('/api/status')).status).toBe(200);

      served.srv.advance(DAY + 60_000);
      // Past its 7 days an account is no longer claimable, even before the sweep comes.
      expectError(
        await person.client.post('/api/accounts/claim-anonymous', { claimSecret: left.claimSecret }),
        400,
        'INVALID_LINK_TOKEN',
      );
      const swept = await served.srv.server.sweepAnonymous();
      expect(swept.accounts).toContain(left.accountId);
      expect(swept.boards).toContain(left.projectId);
      expect(swept.accounts).not.toContain(kept.accountId);
      expect(swept.finished).toContain(kept.accountId);
      expect(await store.accounts.get(left.accountId)).toBeNull();
      expect(await store.anonymousAccounts.get(left.accountId)).toBeNull();
      expect(await store.projects.get(left.projectId)).toBeNull();
      expect(await store.boards.get(left.projectId)).toBeNull();
      expect(await store.tokens.count({ accountId: left.accountId })).toBe(0);
      expectError(await left.agent.get('/api/status'), 401, 'INVALID_SERVICE_TOKEN');
      // The claimed board is the person's, its agent works under the person's account, and the anonymous account is gone.
      expect((await kept.agent.get('/api/status')).body.counts.ready).toBe(1);
      expect((await kept.agent.get('/api/whoami')).body).toMatchObject({ account: { id: person.accountId } });
      expect(await store.projects.get(kept.projectId)).toMatchObject({ ownerId: person.accountId });
      expect(await store.members.get(`${kept.projectId}:${kept.accountId}`)).toBeNull();
      expect(await store.accounts.get(kept.accountId)).toBeNull();
      expect(await store.anonymousAccounts.get(kept.accountId)).toBeNull();
      // Expired codes are cleared away.
      expect(await store.enrollments.get(sha256(code))).toBeNull();
      expect(await served.srv.server.sweepAnonymous()).toEqual({ accounts: [], boards: [], finished: [] });
    });
  });
}
