// Review h67: revokeIssued (a password reset that confirms the address, an operator's revoke, a
// deletion) denies device grants before and after it revokes the account's tokens, and says an
// approval racing it "is caught by the second pass". Not when the agent's poll mints and delivers
// between the token passes and that second pass: the grant is `delivered`, so the second pass
// skips it, and the token was stored after the last read of live tokens, so nothing revokes it.
// Likewise an enrollment code's last use: its record is gone once the use is taken, so neither
// pass finds the code, and the redemption's token, stored after the passes, goes out live.
import { describe, expect, it } from 'vitest';
import { revokeIssued } from '../../src/accounts/credentials.js';
import { embeddedStore, serveStore } from '../support/stores.js';
import { newBoard } from '../support/board.js';
import { Client } from '../support/server.js';
import { interposeOnce } from '../support/fail-once.js';
import { StoreUnavailableError } from '../../store/ports/store.js';
import { unique } from '../support/temp.js';

describe('revokeIssued racing an approval and its poll', () => {
  const served = serveStore(embeddedStore, { ADDRESS_RATE_PER_MINUTE: '100000' });

  it('leaves no token of the approver live', async () => {
    const store = served.srv.store;
    const board = await newBoard(served.srv.url);
    const ownerId = (await store.projects.get(board.projectId))!.ownerId;
    const agent = new Client(served.srv.url);
    const started = await agent.post('/api/auth/device/start', {
      clientName: unique('agent'),
      projectId: board.projectId,
    });
    expect(started.status, started.text).toBe(200);
    const { deviceCode, userCode } = started.body as { deviceCode: string; userCode: string };

    // The approval lands while the revocation is under way, before the approver's sessions go
    // (after the first pass over grants found it pending).
    const deleteSessions = store.sessions.deleteMany.bind(store.sessions);
    store.sessions.deleteMany = (async (...args: Parameters<typeof deleteSessions>) => {
      store.sessions.deleteMany = deleteSessions;
      const approved = await board.owner.post('/api/auth/device/approve', {
        userCode,
        projectId: board.projectId,
        approve: true,
      });
      expect(approved.status, approved.text).toBe(200);
      return deleteSessions(...args);
    }) as typeof store.sessions.deleteMany;
    // The agent's poll runs after the tokens were revoked and before the second pass over grants.
    const selectGrants = store.deviceGrants.select.bind(store.deviceGrants);
    let grantReads = 0;
    let polled: { status: number; body: { token?: { id: string } } } | undefined;
    store.deviceGrants.select = (async (...args: Parameters<typeof selectGrants>) => {
      if (++grantReads === 2) {
        store.deviceGrants.select = selectGrants;
        polled = await agent.post('/api/auth/device/poll', { deviceCode });
      }
      return selectGrants(...args);
    }) as typeof store.deviceGrants.select;

    await revokeIssued(store, ownerId, Date.now());
    store.sessions.deleteMany = deleteSessions;
    store.deviceGrants.select = selectGrants;

    expect(polled).toBeDefined();
    const live = await store.tokens.find({ accountId: ownerId, revoked: false });
    expect(
      live.map((t) => t.name),
      `poll answered ${polled!.status}; the grant is ${(await store.deviceGrants.find({ approvedBy: ownerId }))[0]?.status}`,
    ).toEqual([]);
  });

  it('lets no token out of an enrollment code’s last use redeemed while it runs', async () => {
    const store = served.srv.store;
    const board = await newBoard(served.srv.url);
    const ownerId = (await store.projects.get(board.projectId))!.ownerId;
    const minted = await board.owner.post(`/api/projects/${board.projectId}/agents/enroll`, {
      uses: 1,
      ttlSeconds: 600,
    });
    expect(minted.status, minted.text).toBe(201);
    // The whole revocation runs while the redemption (its use taken) stores its token.
    interposeOnce(store.tokens, 'insert', 'before', () => revokeIssued(store, ownerId, Date.now()));
    const name = unique('racer');
    const enrolled = await new Client(served.srv.url).post('/api/projects/enroll', { code: minted.body.code, name });
    expect(
      await store.tokens.count({ name, revoked: false }),
      `the redemption answered ${enrolled.status} after revokeIssued had finished`,
    ).toBe(0);
  });
  it('gives no use back to a code revoked while its last redemption failed', async () => {
    const store = served.srv.store;
    const board = await newBoard(served.srv.url);
    const ownerId = (await store.projects.get(board.projectId))!.ownerId;
    const minted = await board.owner.post(`/api/projects/${board.projectId}/agents/enroll`, {
      uses: 1,
      ttlSeconds: 600,
    });
    expect(minted.status, minted.text).toBe(201);
    // The last use is taken; the revocation runs; then the token's write fails, and the use goes back.
    const insert = store.tokens.insert.bind(store.tokens);
    store.tokens.insert = (async () => {
      store.tokens.insert = insert;
      await revokeIssued(store, ownerId, Date.now());
      throw new StoreUnavailableError(new Error('failed once, on purpose'));
    }) as typeof store.tokens.insert;
    const failed = await new Client(served.srv.url).post('/api/projects/enroll', { code: minted.body.code, name: 'x' });
    expect(failed.status, failed.text).toBeGreaterThanOrEqual(500);
    const again = await new Client(served.srv.url).post('/api/projects/enroll', {
      code: minted.body.code,
      name: unique('after'),
    });
    expect(again.status, `a redemption after the revocation answered ${again.status}`).toBe(400);
  });
  it('lets no token out of an approval made before it and landing after it', async () => {
    const store = served.srv.store;
    const board = await newBoard(served.srv.url);
    const ownerId = (await store.projects.get(board.projectId))!.ownerId;
    const agent = new Client(served.srv.url);
    const started = await agent.post('/api/auth/device/start', {
      clientName: unique('agent'),
      projectId: board.projectId,
    });
    const { deviceCode, userCode } = started.body as { deviceCode: string; userCode: string };
    // The whole revocation runs after the approval was authorised and before its write lands.
    interposeOnce(store.deviceGrants, 'update', 'before', () => revokeIssued(store, ownerId, Date.now()));
    const approved = await board.owner.post('/api/auth/device/approve', {
      userCode,
      projectId: board.projectId,
      approve: true,
    });
    expect(approved.status, approved.text).toBe(200);
    const polled = await agent.post('/api/auth/device/poll', { deviceCode });
    expect(await store.tokens.count({ accountId: ownerId, revoked: false }), `the poll answered ${polled.status}`).toBe(
      0,
    );
    expect(polled.text).toContain('ACCESS_DENIED');
  });

  it('lets no token out of a code made before it and stored after it', async () => {
    const store = served.srv.store;
    const board = await newBoard(served.srv.url);
    const ownerId = (await store.projects.get(board.projectId))!.ownerId;
    interposeOnce(store.enrollments, 'insert', 'before', () => revokeIssued(store, ownerId, Date.now()));
    const minted = await board.owner.post(`/api/projects/${board.projectId}/agents/enroll`, {
      uses: 1,
      ttlSeconds: 600,
    });
    expect(minted.status, minted.text).toBe(201);
    const name = unique('late');
    const enrolled = await new Client(served.srv.url).post('/api/projects/enroll', { code: minted.body.code, name });
    expect(await store.tokens.count({ name, revoked: false }), `the redemption answered ${enrolled.status}`).toBe(0);
  });
});
