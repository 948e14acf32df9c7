// Ownership transfers over real HTTP: within the recipient's board limit, billing staying with the
// board, a removal racing the accept, an accept cut short and finished by the recipient, and an
// accepted transfer overtaken by a newer one.
import { expect, it } from 'vitest';
import { SHARING_TTL_MS } from '../../src/accounts/sharing.js';
import { StoreUnavailableError } from '../../store/ports/store.js';
import { newBoard } from '../support/board.js';
import { billingRecord } from '../support/billing.js';
import { expectError } from '../support/expect-error.js';
import { failOnce } from '../support/fail-once.js';
import { Client, type Res } from '../support/server.js';
import { PUBLIC_URL, type SharingKit } from './sharing-kit.js';

export function transferCases(kit: SharingKit): void {
  const { url, srv, person, listed, join, remove, offered, takeOver } = kit;

  it('transfers a board: the recipient becomes owner within their board limit, the previous owner admin, billing stays with the board', async () => {
    const board = await newBoard(url());
    const ownerId = (await board.owner.get('/api/auth/me')).body.user.id as string;
    const [heir, outsider] = await Promise.all([person(), person()]);
    await join(board, heir, 'member');
    const offer = (to: string, by = board.owner) =>
      by.post(`/api/boards/${board.projectId}/transfers`, { toUserId: to });
    const take = (transferId: string, by: Client) => by.post(`/api/boards/transfers/${transferId}/accept`);

    expectError(await offer(outsider.accountId), 404, 'MEMBER_NOT_FOUND');
    expectError(await offer(ownerId), 400, 'INVALID_INPUT');
    expectError(await offer(ownerId, heir.client), 403, 'ROLE_REQUIRED');
    const record = billingRecord(board.projectId, ownerId, {
      subscriptionId: 'sub_kept',
      status: 'active',
      interval: 'month',
      priceId: 'price_m',
    });
    await srv().store.billing.insert(record);

    srv().advance(61_000); // the heir was mailed their invitation: one mail a minute per address
    const opened = await offer(heir.accountId);
    expect(opened.status, opened.text).toBe(201);
    const transferId = opened.body.transfer.transferId as string;
    expect(opened.body.transfer).toMatchObject({
      projectId: board.projectId,
      fromUserId: ownerId,
      toUserId: heir.accountId,
      status: 'pending',
    });
    const mail = await srv().mail.next(heir.email, /^Take over the board/);
    expect(mail.text).toContain(`${PUBLIC_URL}/boards/${board.projectId}/members`);
    expect((await heir.client.get(`/api/boards/${board.projectId}/members`)).body.transfer).toMatchObject({
      transferId,
      toUserId: heir.accountId,
    });
    expectError(await take(transferId, outsider.client), 404, 'TRANSFER_NOT_FOUND');
    expectError(await take(transferId, board.owner), 404, 'TRANSFER_NOT_FOUND');

    // The heir owns their own default board; two more reach the Free limit of 3.
    const extra = [];
    for (const n of [1, 2])
      extra.push((await heir.client.post('/api/projects', { name: `heir ${n}` })).body.projectId as string);
    expectError(await take(transferId, heir.client), 403, 'FREE_PROJECT_LIMIT');
    expect(await listed(heir.client, board.projectId)).toMatchObject({ role: 'member', owned: false });
    expect((await heir.client.request('DELETE', `/api/projects/${extra[0]}`)).status).toBe(204);

    const taken = await take(transferId, heir.client);
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body).toMatchObject({ name: 'My board', transfer: { transferId, status: 'accepted' } });
    expect(await listed(heir.client, board.projectId)).toMatchObject({ role: 'owner', owned: true });
    expect(await listed(board.owner, board.projectId)).toMatchObject({ role: 'admin', owned: false });
    expectError(await take(transferId, heir.client), 404, 'TRANSFER_NOT_FOUND');
    const roles = (await board.owner.get(`/api/boards/${board.projectId}/members`)).body;
    expect(roles.members.map((m: { userId: string; role: string }) => [m.userId, m.role])).toEqual([
      [heir.accountId, 'owner'],
      [ownerId, 'admin'],
    ]);
    expect(roles.transfer).toBeNull();

    // Billing stays with the board and answers to its new owner.
    expect(await srv().store.billing.get(board.projectId)).toMatchObject({
      accountId: heir.accountId,
      customerId: record.customerId,
      subscriptionId: 'sub_kept',
      status: 'active',
    });
    expect((await heir.client.get(`/api/account/billing?projectId=${board.projectId}`)).body).toMatchObject({
      projectId: board.projectId,
      subscription: { status: 'active' },
    });
    expectError(
      await board.owner.get(`/api/account/billing?projectId=${board.projectId}`),
      403,
      'PROJECT_SCOPE_DENIED',
    );
    // The previous owner is an admin now: the owner is out of their reach.
    expectError(await remove(board.owner, board.projectId, heir.accountId), 409, 'OWNER_IMMUTABLE');
    expectError(await offer(heir.accountId), 403, 'ROLE_REQUIRED');

    // An offer lapses after 7 days.
    const back = await offer(ownerId, heir.client);
    expect(back.status).toBe(201);
    srv().advance(SHARING_TTL_MS + 1000);
    expectError(await take(back.body.transfer.transferId, board.owner), 404, 'TRANSFER_NOT_FOUND');
  });

  it('cancels a transfer whose recipient is removed before the accept makes them owner: the board keeps its owner', async () => {
    const { board, ownerId, heir, transferId } = await offered();
    // The removal lands between the accept's checks and its first membership write.
    const members = srv().store.members;
    const original = members.update;
    let removal: Res | undefined;
    members.update = async (...args: Parameters<typeof original>) => {
      members.update = original;
      removal = await remove(board.owner, board.projectId, heir.accountId);
      return original.apply(members, args);
    };
    expectError(await takeOver(transferId, heir.client), 404, 'TRANSFER_NOT_FOUND');
    expect(removal?.status).toBe(204);
    expect(await srv().store.projects.get(board.projectId)).toMatchObject({ ownerId });
    expect(await srv().store.members.get(`${board.projectId}:${ownerId}`)).toMatchObject({ role: 'owner' });
    expect(await srv().store.members.get(`${board.projectId}:${heir.accountId}`)).toBeNull();
    expect((await srv().store.transfers.get(transferId))!.status).toBe('cancelled');
    const listing = (await board.owner.get(`/api/boards/${board.projectId}/members`)).body;
    expect(listing).toMatchObject({ role: 'owner', transfer: null });
    expect(listing.members.map((m: { userId: string; role: string }) => [m.userId, m.role])).toEqual([
      [ownerId, 'owner'],
    ]);
    expect(await listed(heir.client, board.projectId)).toBeUndefined();
  });

  it('refuses to remove a recipient the accept already made owner (OWNER_IMMUTABLE), and the transfer completes', async () => {
    const { board, ownerId, heir, transferId } = await offered();
    // The removal lands once the recipient's membership says owner, before the board's owner moves.
    const projects = srv().store.projects;
    const original = projects.update;
    let removal: Res | undefined;
    projects.update = async (...args: Parameters<typeof original>) => {
      projects.update = original;
      removal = await remove(board.owner, board.projectId, heir.accountId);
      return original.apply(projects, args);
    };
    const taken = await takeOver(transferId, heir.client);
    expect(taken.status, taken.text).toBe(200);
    expectError(removal!, 409, 'OWNER_IMMUTABLE');
    expect(await srv().store.projects.get(board.projectId)).toMatchObject({ ownerId: heir.accountId });
    expect(await srv().store.members.get(`${board.projectId}:${heir.accountId}`)).toMatchObject({ role: 'owner' });
    expect(await srv().store.members.get(`${board.projectId}:${ownerId}`)).toMatchObject({ role: 'admin' });
    expect(await listed(heir.client, board.projectId)).toMatchObject({ role: 'owner', owned: true });
  });

  it('finishes a transfer cut short before the owner moved when the recipient accepts again; meanwhile the sender still owns the board', async () => {
    const { board, ownerId, heir, transferId } = await offered();
    await srv().store.billing.insert(
      billingRecord(board.projectId, ownerId, {
        subscriptionId: 'sub_cut',
        status: 'active',
        interval: 'month',
        priceId: 'price_m',
      }),
    );
    failOnce(srv().store.projects, 'update');
    expectError(await takeOver(transferId, heir.client), 503, 'AUTH_UNAVAILABLE');
    expect((await srv().store.transfers.get(transferId))!.status).toBe('accepted');
    expect(await srv().store.projects.get(board.projectId)).toMatchObject({ ownerId });

    // One owner meanwhile: the sender. The recipient's membership already says owner, which counts as admin, and cannot be removed.
    expect(
      (await board.owner.get(`/api/boards/${board.projectId}/members`)).body.members.map(
        (m: { role: string }) => m.role,
      ),
    ).toEqual(['owner', 'admin']);
    expectError(
      await heir.client.post(`/api/boards/${board.projectId}/transfers`, { toUserId: ownerId }),
      403,
      'ROLE_REQUIRED',
    );
    expectError(await remove(board.owner, board.projectId, heir.accountId), 409, 'OWNER_IMMUTABLE');
    expectError(await remove(heir.client, board.projectId, heir.accountId), 409, 'OWNER_IMMUTABLE');
    // Both see the takeover under way, so the recipient knows to finish it.
    for (const client of [board.owner, heir.client]) {
      expect((await client.get(`/api/boards/${board.projectId}/members`)).body.transfer).toMatchObject({
        transferId,
        toUserId: heir.accountId,
        status: 'accepted',
      });
    }

    const finished = await takeOver(transferId, heir.client);
    expect(finished.status, finished.text).toBe(200);
    expect(finished.body.transfer).toMatchObject({ transferId, status: 'accepted' });
    expect(await srv().store.projects.get(board.projectId)).toMatchObject({ ownerId: heir.accountId });
    expect(await srv().store.members.get(`${board.projectId}:${ownerId}`)).toMatchObject({ role: 'admin' });
    expect(await srv().store.billing.get(board.projectId)).toMatchObject({
      accountId: heir.accountId,
      subscriptionId: 'sub_cut',
    });
    expect(await listed(heir.client, board.projectId)).toMatchObject({ role: 'owner', owned: true });
    expect(await listed(board.owner, board.projectId)).toMatchObject({ role: 'admin', owned: false });
    expect((await heir.client.get(`/api/boards/${board.projectId}/members`)).body.transfer).toBeNull();
    expectError(await takeOver(transferId, heir.client), 404, 'TRANSFER_NOT_FOUND');
  });

  it('finishes a transfer cut short after the owner moved; meanwhile the recipient alone owns the board, and account deletion follows projects.ownerId', async () => {
    const { board, ownerId, heir, transferId } = await offered();
    const ownerEmail = (await board.owner.get('/api/auth/me')).body.user.email as string;
    await srv().store.billing.insert(
      billingRecord(board.projectId, ownerId, {
        subscriptionId: 'sub_half',
        status: 'active',
        interval: 'month',
        priceId: 'price_m',
      }),
    );
    // The previous owner's step down fails once: the board has moved, the memberships and billing not all.
    const members = srv().store.members;
    const original = members.update;
    members.update = async (...args: Parameters<typeof original>) => {
      if (args[0] !== `${board.projectId}:${ownerId}`) return original.apply(members, args);
      members.update = original;
      throw new StoreUnavailableError(new Error('once'));
    };
    expectError(await takeOver(transferId, heir.client), 503, 'AUTH_UNAVAILABLE');
    expect(await srv().store.projects.get(board.projectId)).toMatchObject({ ownerId: heir.accountId });
    expect(await srv().store.members.get(`${board.projectId}:${ownerId}`)).toMatchObject({ role: 'owner' });
    expect(await srv().store.billing.get(board.projectId)).toMatchObject({ accountId: ownerId });

    // The sender's leftover owner membership counts as admin; the recipient is the one owner.
    expect((await board.owner.get(`/api/boards/${board.projectId}/members`)).body.role).toBe('admin');
    expectError(
      await board.owner.post(`/api/boards/${board.projectId}/transfers`, { toUserId: heir.accountId }),
      403,
      'ROLE_REQUIRED',
    );
    expectError(
      await board.owner.get(`/api/account/billing?projectId=${board.projectId}`),
      403,
      'PROJECT_SCOPE_DENIED',
    );
    expect((await heir.client.get(`/api/account/billing?projectId=${board.projectId}`)).body).toMatchObject({
      projectId: board.projectId,
      subscription: { status: 'active' },
    });
    expect((await heir.client.get(`/api/boards/${board.projectId}/members`)).body.transfer).toMatchObject({
      transferId,
      status: 'accepted',
    });
    // Deleting the recipient's account must end the board's live subscription first (no provider here: refused, nothing deleted)...
    expectError(
      await heir.client.request('DELETE', '/api/account', {
        json: { confirmEmail: heir.email, currentPassword: heir.password },
      }),
      502,
      'PROVIDER_UNAVAILABLE',
    );
    expect(await srv().store.projects.get(board.projectId)).toMatchObject({ ownerId: heir.accountId });
    // ...while the sender's account no longer answers for it.
    const other = new Client(url());
    expect((await other.post('/api/auth/login', { email: ownerEmail, password: heir.password })).status).toBe(200);

    const finished = await takeOver(transferId, heir.client);
    expect(finished.status, finished.text).toBe(200);
    expect(await srv().store.members.get(`${board.projectId}:${ownerId}`)).toMatchObject({ role: 'admin' });
    expect(await srv().store.billing.get(board.projectId)).toMatchObject({ accountId: heir.accountId });
    expectError(await takeOver(transferId, heir.client), 404, 'TRANSFER_NOT_FOUND');
    const gone = await other.request('DELETE', '/api/account', {
      json: { confirmEmail: ownerEmail, currentPassword: heir.password },
    });
    expect(gone.status, gone.text).toBe(204);
    expect(await srv().store.projects.get(board.projectId)).toMatchObject({ ownerId: heir.accountId });
  });

  it('does not finish an accepted transfer a newer one overtook', async () => {
    const { board, ownerId, heir, transferId } = await offered();
    const other = await person();
    await join(board, other, 'member');
    failOnce(srv().store.projects, 'update');
    expectError(await takeOver(transferId, heir.client), 503, 'AUTH_UNAVAILABLE');
    // The owner, still the owner, offers the board to someone else, who takes it.
    srv().advance(61_000);
    const second = await board.owner.post(`/api/boards/${board.projectId}/transfers`, { toUserId: other.accountId });
    expect(second.status, second.text).toBe(201);
    expect((await takeOver(second.body.transfer.transferId, other.client)).status).toBe(200);
    expectError(await takeOver(transferId, heir.client), 404, 'TRANSFER_NOT_FOUND');
    expect(await srv().store.projects.get(board.projectId)).toMatchObject({ ownerId: other.accountId });
    const roles = Object.fromEntries(
      (await srv().store.members.find({ projectId: board.projectId })).map((m) => [m.accountId, m.role]),
    );
    expect(roles).toEqual({ [ownerId]: 'admin', [heir.accountId]: 'admin', [other.accountId]: 'owner' });
  });
}
