// Invitations over real HTTP: a single-use link mailed to an address and accepted by that account
// only, once it confirmed its address; expired, revoked, replaced and orphaned links refused; a link
// kept alive when the membership cannot be written; the member cap at accept; and single use resting
// on the invitation's version check, whoever races for the link.
import { expect, it } from 'vitest';
import { sha256 } from '../../src/auth/authenticator.js';
import { SHARING_TTL_MS } from '../../src/accounts/sharing.js';
import { modify } from '../../store/ports/store.js';
import { newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { failOnce } from '../support/fail-once.js';
import { verifyEmail } from '../support/verify-email.js';
import { Client, signedUp } from '../support/server.js';
import { PUBLIC_URL, type SharingKit } from './sharing-kit.js';

export function invitationCases(kit: SharingKit): void {
  const { url, srv, person, invite, linkFor, accept, listed, join, setRole, remove, statusOf, beforeTheTake } = kit;

  it('mails a single-use link; only the invited account accepts it, and the board is listed only then, with its role', async () => {
    const board = await newBoard(url());
    const invitee = await person();
    const stranger = await person();

    const created = await invite(board.owner, board.projectId, `  ${invitee.email.toUpperCase()} `, 'member');
    expect(created.status, created.text).toBe(201);
    expect(created.body.invitation).toMatchObject({
      projectId: board.projectId,
      email: invitee.email,
      role: 'member',
      status: 'pending',
      acceptedAt: null,
    });
    expect(Date.parse(created.body.invitation.expiresAt) - Date.parse(created.body.invitation.createdAt)).toBe(
      SHARING_TTL_MS,
    );
    const link = await linkFor(invitee.email);
    expect(link.invitationId).toBe(created.body.invitation.invitationId);
    expect(link.mail.text).toContain(`${PUBLIC_URL}/invitations/${link.invitationId}#token=${link.token}`);
    expect(Buffer.from(link.token, 'base64url')).toHaveLength(32);
    const stored = (await srv().store.invitations.get(link.invitationId))!;
    expect(stored.tokenHash).toBe(sha256(link.token));
    expect(JSON.stringify(stored)).not.toContain(link.token);
    expect(created.text).not.toContain(link.token);

    // Pending: no listing, no access.
    expect(await listed(invitee.client, board.projectId)).toBeUndefined();
    expectError(await invitee.client.get(`/api/status?projectId=${board.projectId}`), 403, 'PROJECT_SCOPE_DENIED');
    expectError(await invitee.client.get(`/api/boards/${board.projectId}/members`), 403, 'PROJECT_SCOPE_DENIED');

    // The invited address may look at its invitation (no token needed, no access given); nobody else may.
    const ownerEmail = (await board.owner.get('/api/auth/me')).body.user.email as string;
    expect((await invitee.client.get(`/api/boards/invitations/${link.invitationId}`)).body).toEqual({
      invitationId: link.invitationId,
      projectId: board.projectId,
      name: 'My board',
      role: 'member',
      email: invitee.email,
      invitedBy: ownerEmail,
      status: 'pending',
      expiresAt: created.body.invitation.expiresAt,
    });
    expectError(
      await stranger.client.get(`/api/boards/invitations/${link.invitationId}`),
      403,
      'INVITATION_EMAIL_MISMATCH',
    );
    expectError(await invitee.client.get('/api/boards/invitations/no-such-invitation'), 404, 'INVITATION_NOT_FOUND');
    expectError(await accept(stranger.client, link), 403, 'INVITATION_EMAIL_MISMATCH');
    expectError(
      await accept(invitee.client, { ...link, token: `${link.token.slice(0, -2)}xx` }),
      400,
      'INVALID_LINK_TOKEN',
    );
    expectError(
      await accept(invitee.client, { ...link, invitationId: 'no-such-invitation' }),
      404,
      'INVITATION_NOT_FOUND',
    );
    expectError(
      await new Client(url()).post(`/api/boards/invitations/${link.invitationId}/accept`, { token: link.token }),
      401,
      'UNAUTHENTICATED',
    );

    const accepted = await accept(invitee.client, link);
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body).toEqual({
      invitationId: link.invitationId,
      projectId: board.projectId,
      name: 'My board',
      role: 'member',
    });
    expect(await listed(invitee.client, board.projectId)).toMatchObject({ role: 'member', owned: false });
    expect((await invitee.client.get(`/api/status?projectId=${board.projectId}`)).status).toBe(200);
    expectError(await accept(invitee.client, link), 400, 'INVALID_LINK_TOKEN');
    expect((await invitee.client.get(`/api/boards/invitations/${link.invitationId}`)).body.status).toBe('accepted');

    const invitations = (await board.owner.get(`/api/boards/${board.projectId}/invitations`)).body.invitations;
    expect(invitations).toEqual([
      expect.objectContaining({ invitationId: link.invitationId, status: 'accepted', acceptedBy: invitee.accountId }),
    ]);
    expectError(await invite(board.owner, board.projectId, invitee.email), 409, 'ALREADY_MEMBER');

    const members = await invitee.client.get(`/api/boards/${board.projectId}/members`);
    expect(members.status).toBe(200);
    expect(members.body).toMatchObject({ projectId: board.projectId, role: 'member', transfer: null });
    expect(members.body.members.map((m: { email: string; role: string }) => m.role)).toEqual(['owner', 'member']);
    expect(members.body.members[1]).toMatchObject({ userId: invitee.accountId, email: invitee.email });

    // A member neither reads nor sends invitations; nobody invites an address that is not one.
    expectError(await invitee.client.get(`/api/boards/${board.projectId}/invitations`), 403, 'ROLE_REQUIRED');
    expectError(await invite(invitee.client, board.projectId, stranger.email), 403, 'ROLE_REQUIRED');
    expectError(await invite(board.owner, board.projectId, 'not an address'), 400, 'INVALID_EMAIL');
    // Workspace tokens never reach account structure.
    const agent = await board.agent('builder', 'admin');
    expectError(await agent.get(`/api/boards/${board.projectId}/members`), 403, 'PROJECT_SCOPE_DENIED');
    expectError(await invite(agent, board.projectId, stranger.email), 403, 'PROJECT_SCOPE_DENIED');
  });

  it('lets only a confirmed address see or accept its invitation: a forwarded link is not enough', async () => {
    const board = await newBoard(url());
    // Whoever got the forwarded link signs up as the invited address, without its mailbox.
    const holder = await signedUp(url());
    expect((await invite(board.owner, board.projectId, holder.email)).status).toBe(201);
    const link = await linkFor(holder.email);
    const preview = await holder.client.get(`/api/boards/invitations/${link.invitationId}`);
    expectError(preview, 403, 'EMAIL_NOT_VERIFIED');
    expect(preview.body.error.message).toContain(holder.email);
    expectError(await accept(holder.client, link), 403, 'EMAIL_NOT_VERIFIED');
    expect(await srv().store.members.get(`${board.projectId}:${holder.accountId}`)).toBeNull();
    expect((await srv().store.invitations.get(link.invitationId))!.status).toBe('pending');
    expect(await listed(holder.client, board.projectId)).toBeUndefined();
    // Another account is still told it is the wrong one first.
    const stranger = await signedUp(url());
    expectError(await accept(stranger.client, link), 403, 'INVITATION_EMAIL_MISMATCH');

    // Confirmed, the same link works.
    await verifyEmail(srv(), holder.email, holder.client);
    expect((await holder.client.get(`/api/boards/invitations/${link.invitationId}`)).body).toMatchObject({
      status: 'pending',
      email: holder.email,
    });
    expect((await accept(holder.client, link)).status).toBe(200);
  });

  it('refuses an expired link, a revoked one and a resent one’s old link; closed invitations stay closed', async () => {
    const board = await newBoard(url());
    const late = await person();
    const revoked = await person();

    expect((await invite(board.owner, board.projectId, late.email)).status).toBe(201);
    const first = await linkFor(late.email);
    srv().advance(SHARING_TTL_MS + 1000);
    expectError(await accept(late.client, first), 400, 'EXPIRED_TOKEN');
    const listing = (await board.owner.get(`/api/boards/${board.projectId}/invitations`)).body.invitations;
    expect(listing[0]).toMatchObject({ invitationId: first.invitationId, status: 'expired' });

    const resent = await board.owner.post(`/api/boards/${board.projectId}/invitations/${first.invitationId}/resend`);
    expect(resent.status, resent.text).toBe(200);
    expect(resent.body.invitation).toMatchObject({ status: 'pending' });
    const second = await linkFor(late.email);
    expect(second.invitationId).toBe(first.invitationId);
    expect(second.token).not.toBe(first.token);
    expectError(
      await board.owner.post(`/api/boards/${board.projectId}/invitations/${first.invitationId}/resend`),
      429,
      'INVITATION_LIMIT',
    );
    expectError(await accept(late.client, first), 400, 'INVALID_LINK_TOKEN');
    expect((await accept(late.client, second)).status).toBe(200);
    expectError(
      await board.owner.post(`/api/boards/${board.projectId}/invitations/${first.invitationId}/resend`),
      409,
      'INVITATION_CLOSED',
    );
    expectError(
      await board.owner.post(`/api/boards/${board.projectId}/invitations/${first.invitationId}/revoke`),
      409,
      'INVITATION_CLOSED',
    );

    expect((await invite(board.owner, board.projectId, revoked.email, 'viewer')).status).toBe(201);
    const link = await linkFor(revoked.email);
    expectError(await invite(board.owner, board.projectId, revoked.email, 'viewer'), 429, 'INVITATION_LIMIT');
    const revoking = await board.owner.post(
      `/api/boards/${board.projectId}/invitations/${link.invitationId}/revoke`,
      {},
    );
    expect(revoking.body.invitation).toMatchObject({ status: 'revoked' });
    expect(
      (await board.owner.post(`/api/boards/${board.projectId}/invitations/${link.invitationId}/revoke`)).status,
    ).toBe(200);
    expectError(await accept(revoked.client, link), 400, 'INVALID_LINK_TOKEN');
    expectError(
      await board.owner.post(`/api/boards/${board.projectId}/invitations/${link.invitationId}/resend`),
      409,
      'INVITATION_CLOSED',
    );
    expectError(
      await board.owner.post(`/api/boards/${board.projectId}/invitations/nope/revoke`),
      404,
      'INVITATION_NOT_FOUND',
    );
    expect(await listed(revoked.client, board.projectId)).toBeUndefined();

    // Re-inviting an address replaces its pending link, once the minute has passed.
    srv().advance(61_000);
    expect((await invite(board.owner, board.projectId, revoked.email, 'viewer')).status).toBe(201);
    const again = await linkFor(revoked.email);
    srv().advance(61_000);
    expect((await invite(board.owner, board.projectId, revoked.email, 'member')).status).toBe(201);
    const newest = await linkFor(revoked.email);
    expectError(await accept(revoked.client, again), 400, 'INVALID_LINK_TOKEN');
    expect((await accept(revoked.client, newest)).body).toMatchObject({ role: 'member' });
  });

  it('kills the pending invitations of an admin who is removed or demoted, and any link whose sender is no longer an admin', async () => {
    const board = await newBoard(url());
    const [admin, demoted, x, y, z, w] = await Promise.all([
      person(),
      person(),
      person(),
      person(),
      person(),
      person(),
    ]);
    await join(board, admin, 'admin');
    await join(board, demoted, 'admin');
    expect((await invite(admin.client, board.projectId, x.email)).status).toBe(201);
    const fromRemoved = await linkFor(x.email);
    expect((await invite(demoted.client, board.projectId, y.email, 'viewer')).status).toBe(201);
    const fromDemoted = await linkFor(y.email);
    expect((await invite(demoted.client, board.projectId, w.email)).status).toBe(201);
    const racing = await linkFor(w.email);

    expect(statusOf(await remove(board.owner, board.projectId, admin.accountId))).toBe(204);
    expect((await setRole(board.owner, board.projectId, demoted.accountId, 'member')).status).toBe(200);
    const statuses = Object.fromEntries(
      (
        (await board.owner.get(`/api/boards/${board.projectId}/invitations`)).body.invitations as {
          email: string;
          status: string;
        }[]
      ).map((i) => [i.email, i.status]),
    );
    expect(statuses).toMatchObject({ [x.email]: 'revoked', [y.email]: 'revoked', [w.email]: 'revoked' });
    expectError(await accept(x.client, fromRemoved), 400, 'INVALID_LINK_TOKEN');
    expectError(await accept(y.client, fromDemoted), 400, 'INVALID_LINK_TOKEN');

    // A link whose sender lost the role without the revocation reaching it (a removal racing the invite) dies at accept and at resend too.
    await modify(srv().store.invitations, racing.invitationId, () => ({ status: 'pending' as const }));
    expectError(await accept(w.client, racing), 400, 'INVALID_LINK_TOKEN');
    expectError(
      await board.owner.post(`/api/boards/${board.projectId}/invitations/${racing.invitationId}/resend`),
      400,
      'INVALID_LINK_TOKEN',
    );
    expect(await listed(w.client, board.projectId)).toBeUndefined();

    // The owner's admin invitations die with the ownership; their member invitations stand, as they stay admin.
    const heir = await person();
    await join(board, heir, 'member');
    expect((await invite(board.owner, board.projectId, z.email, 'admin')).status).toBe(201);
    const asAdmin = await linkFor(z.email);
    const stays = await person();
    expect((await invite(board.owner, board.projectId, stays.email, 'viewer')).status).toBe(201);
    const asViewer = await linkFor(stays.email);
    srv().advance(61_000); // the heir was mailed their invitation: one mail a minute per address
    const offer = await board.owner.post(`/api/boards/${board.projectId}/transfers`, { toUserId: heir.accountId });
    expect((await heir.client.post(`/api/boards/transfers/${offer.body.transfer.transferId}/accept`)).status).toBe(200);
    expectError(await accept(z.client, asAdmin), 400, 'INVALID_LINK_TOKEN');
    expect((await accept(stays.client, asViewer)).status).toBe(200);
  });

  it('keeps the link alive when the membership cannot be written: the same link works on the next try', async () => {
    const board = await newBoard(url());
    const invitee = await person();
    expect((await invite(board.owner, board.projectId, invitee.email)).status).toBe(201);
    const link = await linkFor(invitee.email);
    failOnce(srv().store.members, 'insert');
    expectError(await accept(invitee.client, link), 503, 'AUTH_UNAVAILABLE');
    expect(await srv().store.invitations.get(link.invitationId)).toMatchObject({
      status: 'pending',
      acceptedBy: null,
      acceptedAt: null,
    });
    expect(await srv().store.members.get(`${board.projectId}:${invitee.accountId}`)).toBeNull();
    const again = await accept(invitee.client, link);
    expect(again.status, again.text).toBe(200);
    expect(await srv().store.invitations.get(link.invitationId)).toMatchObject({
      status: 'accepted',
      acceptedBy: invitee.accountId,
    });
    expect(await listed(invitee.client, board.projectId)).toMatchObject({ role: 'member' });
  });

  it('holds the 500-member cap when invitations are accepted, not only when they are sent', async () => {
    const board = await newBoard(url());
    const [first, second, third] = await Promise.all([person(), person(), person()]);
    const links = [];
    for (const p of [first, second, third]) {
      expect((await invite(board.owner, board.projectId, p.email)).status).toBe(201);
      links.push(await linkFor(p.email));
    }
    // Sent while there was room; then the board fills up (owner + 499).
    const filler = Array.from({ length: 499 }, (_, n) => ({
      _id: `${board.projectId}:filler-${n}`,
      version: 1,
      projectId: board.projectId,
      accountId: `filler-${n}`,
      role: 'viewer' as const,
      acceptedAt: 1,
    }));
    for (let at = 0; at < filler.length; at += 50)
      await Promise.all(filler.slice(at, at + 50).map((m) => srv().store.members.insert(m)));
    expect(await srv().store.members.count({ projectId: board.projectId })).toBe(500);

    expectError(await accept(first.client, links[0]!), 429, 'INVITATION_LIMIT');
    expect((await srv().store.invitations.get(links[0]!.invitationId))!.status).toBe('pending');
    expect(await srv().store.members.count({ projectId: board.projectId })).toBe(500);

    // Room for one, two accepts at once: never past the cap.
    await srv().store.members.delete(`${board.projectId}:filler-0`);
    const both = await Promise.all([accept(second.client, links[1]!), accept(third.client, links[2]!)]);
    expect(both.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1);
    for (const r of both.filter((r) => r.status !== 200)) expectError(r, 429, 'INVITATION_LIMIT');
    expect(await srv().store.members.count({ projectId: board.projectId })).toBeLessThanOrEqual(500);

    // The refused link was kept: once there is room it works.
    await srv().store.members.deleteMany({ projectId: board.projectId, role: 'viewer' });
    expect((await accept(first.client, links[0]!)).status).toBe(200);
  });

  it('makes a link single-use by its version check alone: the invited account on a second session cannot use it again, even once the first membership is gone', async () => {
    const board = await newBoard(url());
    const invitee = await person();
    const second = new Client(url());
    expect((await second.post('/api/auth/login', { email: invitee.email, password: invitee.password })).status).toBe(
      200,
    );
    expect((await invite(board.owner, board.projectId, invitee.email)).status).toBe(201);
    const link = await linkFor(invitee.email);
    // The first session passed every check and is about to take the link; the second takes it first, joins, and leaves again:
    // no membership is left that an insert could collide with.
    beforeTheTake(async () => {
      expect((await accept(second, link)).status).toBe(200);
      expect(statusOf(await remove(second, board.projectId, invitee.accountId))).toBe(204);
    });
    expectError(await accept(invitee.client, link), 400, 'INVALID_LINK_TOKEN');
    expect(await srv().store.members.get(`${board.projectId}:${invitee.accountId}`)).toBeNull();
    expect(await listed(invitee.client, board.projectId)).toBeUndefined();
    expect((await srv().store.invitations.get(link.invitationId))!.status).toBe('accepted');
  });

  it('never lets two accounts use one link: the one that held the invited address first loses once another account holding it now accepted', async () => {
    const board = await newBoard(url());
    const first = await person();
    const invited = first.email;
    expect((await invite(board.owner, board.projectId, invited)).status).toBe(201);
    const link = await linkFor(invited);
    // While the first account's accept is under way, it moves to another address and a second account signs up as the invited one and accepts.
    let other: Client | undefined;
    beforeTheTake(async () => {
      expect(
        (
          await first.client.post('/api/account/email', {
            currentPassword: first.password,
            newEmail: `moved-${invited}`,
          })
        ).status,
      ).toBe(200);
      other = new Client(url());
      expect((await other.post('/api/auth/signup', { email: invited, password: first.password })).status).toBe(201);
      await verifyEmail(srv(), invited, other);
      const taken = await accept(other, link);
      expect(taken.status, taken.text).toBe(200);
    });
    expectError(await accept(first.client, link), 400, 'INVALID_LINK_TOKEN');
    const members = await srv().store.members.find({ projectId: board.projectId });
    expect(members.map((m) => m.accountId).sort()).toEqual([...new Set(members.map((m) => m.accountId))].sort());
    expect(members).toHaveLength(2);
    expect(await srv().store.members.get(`${board.projectId}:${first.accountId}`)).toBeNull();
    const otherId = (await other!.get('/api/auth/me')).body.user.id as string;
    expect(await srv().store.invitations.get(link.invitationId)).toMatchObject({
      status: 'accepted',
      acceptedBy: otherId,
    });
  });

  it('lets exactly one of two concurrent accepts of one link succeed; the other learns the link was used', async () => {
    for (let round = 0; round < 3; round++) {
      const board = await newBoard(url());
      const invitee = await person();
      const second = new Client(url());
      expect((await second.post('/api/auth/login', { email: invitee.email, password: invitee.password })).status).toBe(
        200,
      );
      expect((await invite(board.owner, board.projectId, invitee.email)).status).toBe(201);
      const link = await linkFor(invitee.email);
      const results = await Promise.all([accept(invitee.client, link), accept(second, link)]);
      expect(results.map(statusOf).sort()).toEqual([200, 400]);
      expectError(
        results.find((r) => r.status !== 200)!,
        400,
        'INVALID_LINK_TOKEN',
      );
      expect(await srv().store.members.count({ projectId: board.projectId })).toBe(2);
      expect((await srv().store.invitations.get(link.invitationId))!.status).toBe('accepted');
    }
  });
}
