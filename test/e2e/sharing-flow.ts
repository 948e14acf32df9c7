// Board sharing over real HTTP and WebSocket (DOMAIN.md "Sharing"), run on each store adapter:
// invitations mailed and accepted by the right account only (expired, revoked and replaced links
// refused), the listing before and after, role changes and removal taking effect on the next
// request and on sockets and tokens, transfers within the recipient's board limit, and two
// accepts of one link racing.
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/auth/authenticator.js';
import { SHARING_TTL_MS } from '../../src/accounts/sharing.js';
import { modify, StoreUnavailableError } from '../../store/ports/store.js';
import { newBoard, type TestBoard } from '../support/board.js';
import { billingRecord } from '../support/billing.js';
import { expectError } from '../support/expect-error.js';
import { failOnce } from '../support/fail-once.js';
import { verifyEmail } from '../support/verify-email.js';
import { CaptureMailer, Client, signedUp, type Res } from '../support/server.js';
import { openSocket, type TestSocket } from '../support/socket.js';
import { serveStore, type OpenedStore } from '../support/stores.js';

const PUBLIC_URL = 'http://board.test';

type Person = Awaited<ReturnType<typeof signedUp>>;

export function sharingFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`sharing on the ${name} store`, () => {
    // Every person here signs up and confirms their address from one socket address: lift that budget.
    const served = serveStore(open, { PUBLIC_URL, ADDRESS_RATE_PER_MINUTE: '100000' });
    const url = () => served.srv.url;
    const srv = () => served.srv;
    /** Someone signed up who opened the confirmation link mailed to them. */
    const person = async (): Promise<Person> => {
      const signed = await signedUp(url());
      await verifyEmail(srv(), signed.email);
      return signed;
    };

    const invite = (by: Client, projectId: string, email: string, role = 'member') => by.post(`/api/boards/${projectId}/invitations`, { email, role });
    /** The link last mailed to `email`: its invitation id and token. */
    const linkFor = async (email: string) => {
      const mail = await srv().mail.next(email, /^Invitation to the board/);
      const m = /\/invitations\/([\w-]+)#token=/.exec(mail.text);
      return { invitationId: m![1]!, token: CaptureMailer.tokenOf(mail), mail };
    };
    const accept = (by: Client, link: { invitationId: string; token: string }) => by.post(`/api/boards/invitations/${link.invitationId}/accept`, { token: link.token });
    const listed = async (client: Client, projectId: string) => ((await client.get('/api/projects?limit=200')).body.projects as { projectId: string; role: string; owned: boolean }[]).find((p) => p.projectId === projectId);
    /** `person` invited with `role` and accepted. */
    const join = async (board: TestBoard, person: Person, role = 'member', by: Client = board.owner) => {
      expect((await invite(by, board.projectId, person.email, role)).status).toBe(201);
      const res = await accept(person.client, await linkFor(person.email));
      expect(res.status, res.text).toBe(200);
    };
    const setRole = (by: Client, projectId: string, userId: string, role: string) => by.post(`/api/boards/${projectId}/members/${userId}/role`, { role });
    const remove = (by: Client, projectId: string, userId: string) => by.request('DELETE', `/api/boards/${projectId}/members/${userId}`);
    const cookieOf = (client: Client) => ({ cookie: `board_session=${client.cookies.get('board_session')}` });
    const subscribed = async (socket: TestSocket, boardId: string) => {
      socket.send({ type: 'subscribe', boardId, topics: ['activity'] });
      return socket.next((m) => (m.type === 'subscribed' || m.type === 'error') && (m.boardId === boardId || m.error));
    };
    const statusOf = (res: Res) => res.status;

    it('mails a single-use link; only the invited account accepts it, and the board is listed only then, with its role', async () => {
      const board = await newBoard(url());
      const invitee = await person();
      const stranger = await person();

      const created = await invite(board.owner, board.projectId, `  ${invitee.email.toUpperCase()} `, 'member');
      expect(created.status, created.text).toBe(201);
      expect(created.body.invitation).toMatchObject({ projectId: board.projectId, email: invitee.email, role: 'member', status: 'pending', acceptedAt: null });
      expect(Date.parse(created.body.invitation.expiresAt) - Date.parse(created.body.invitation.createdAt)).toBe(SHARING_TTL_MS);
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
        invitationId: link.invitationId, projectId: board.projectId, name: 'My board', role: 'member', email: invitee.email, invitedBy: ownerEmail, status: 'pending', expiresAt: created.body.invitation.expiresAt,
      });
      expectError(await stranger.client.get(`/api/boards/invitations/${link.invitationId}`), 403, 'INVITATION_EMAIL_MISMATCH');
      expectError(await invitee.client.get('/api/boards/invitations/no-such-invitation'), 404, 'INVITATION_NOT_FOUND');
      expectError(await accept(stranger.client, link), 403, 'INVITATION_EMAIL_MISMATCH');
      expectError(await accept(invitee.client, { ...link, token: `${link.token.slice(0, -2)}xx` }), 400, 'INVALID_LINK_TOKEN');
      expectError(await accept(invitee.client, { ...link, invitationId: 'no-such-invitation' }), 404, 'INVITATION_NOT_FOUND');
      expectError(await new Client(url()).post(`/api/boards/invitations/${link.invitationId}/accept`, { token: link.token }), 401, 'UNAUTHENTICATED');

      const accepted = await accept(invitee.client, link);
      expect(accepted.status, accepted.text).toBe(200);
      expect(accepted.body).toEqual({ invitationId: link.invitationId, projectId: board.projectId, name: 'My board', role: 'member' });
      expect(await listed(invitee.client, board.projectId)).toMatchObject({ role: 'member', owned: false });
      expect((await invitee.client.get(`/api/status?projectId=${board.projectId}`)).status).toBe(200);
      expectError(await accept(invitee.client, link), 400, 'INVALID_LINK_TOKEN');
      expect((await invitee.client.get(`/api/boards/invitations/${link.invitationId}`)).body.status).toBe('accepted');

      const invitations = (await board.owner.get(`/api/boards/${board.projectId}/invitations`)).body.invitations;
      expect(invitations).toEqual([expect.objectContaining({ invitationId: link.invitationId, status: 'accepted', acceptedBy: invitee.accountId })]);
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
      await verifyEmail(srv(), holder.email);
      expect((await holder.client.get(`/api/boards/invitations/${link.invitationId}`)).body).toMatchObject({ status: 'pending', email: holder.email });
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
      expectError(await board.owner.post(`/api/boards/${board.projectId}/invitations/${first.invitationId}/resend`), 429, 'INVITATION_LIMIT');
      expectError(await accept(late.client, first), 400, 'INVALID_LINK_TOKEN');
      expect((await accept(late.client, second)).status).toBe(200);
      expectError(await board.owner.post(`/api/boards/${board.projectId}/invitations/${first.invitationId}/resend`), 409, 'INVITATION_CLOSED');
      expectError(await board.owner.post(`/api/boards/${board.projectId}/invitations/${first.invitationId}/revoke`), 409, 'INVITATION_CLOSED');

      expect((await invite(board.owner, board.projectId, revoked.email, 'viewer')).status).toBe(201);
      const link = await linkFor(revoked.email);
      expectError(await invite(board.owner, board.projectId, revoked.email, 'viewer'), 429, 'INVITATION_LIMIT');
      const revoking = await board.owner.post(`/api/boards/${board.projectId}/invitations/${link.invitationId}/revoke`, {});
      expect(revoking.body.invitation).toMatchObject({ status: 'revoked' });
      expect((await board.owner.post(`/api/boards/${board.projectId}/invitations/${link.invitationId}/revoke`)).status).toBe(200);
      expectError(await accept(revoked.client, link), 400, 'INVALID_LINK_TOKEN');
      expectError(await board.owner.post(`/api/boards/${board.projectId}/invitations/${link.invitationId}/resend`), 409, 'INVITATION_CLOSED');
      expectError(await board.owner.post(`/api/boards/${board.projectId}/invitations/nope/revoke`), 404, 'INVITATION_NOT_FOUND');
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

    it('caps the invitation mail a board sends: 50 an hour, whoever they go to', async () => {
      const board = await newBoard(url());
      for (let n = 0; n < 50; n++) expect((await invite(board.owner, board.projectId, `crowd-${n}-${board.projectId}@example.com`)).status).toBe(201);
      const refused = await invite(board.owner, board.projectId, `one-more-${board.projectId}@example.com`);
      expectError(refused, 429, 'INVITATION_LIMIT');
      // The slot that frees first is the oldest mail's, an hour after it was sent.
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3500);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
      const sent = (await board.owner.get(`/api/boards/${board.projectId}/invitations`)).body.invitations as { invitationId: string }[];
      expectError(await board.owner.post(`/api/boards/${board.projectId}/invitations/${sent[0]!.invitationId}/resend`), 429, 'INVITATION_LIMIT');
      srv().advance(3600_000 + 1000);
      expect((await invite(board.owner, board.projectId, `one-more-${board.projectId}@example.com`)).status).toBe(201);
    });

    it('kills the pending invitations of an admin who is removed or demoted, and any link whose sender is no longer an admin', async () => {
      const board = await newBoard(url());
      const [admin, demoted, x, y, z, w] = await Promise.all([person(), person(), person(), person(), person(), person()]);
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
      const statuses = Object.fromEntries(((await board.owner.get(`/api/boards/${board.projectId}/invitations`)).body.invitations as { email: string; status: string }[]).map((i) => [i.email, i.status]));
      expect(statuses).toMatchObject({ [x.email]: 'revoked', [y.email]: 'revoked', [w.email]: 'revoked' });
      expectError(await accept(x.client, fromRemoved), 400, 'INVALID_LINK_TOKEN');
      expectError(await accept(y.client, fromDemoted), 400, 'INVALID_LINK_TOKEN');

      // A link whose sender lost the role without the revocation reaching it (a removal racing the invite) dies at accept and at resend too.
      await modify(srv().store.invitations, racing.invitationId, () => ({ status: 'pending' as const }));
      expectError(await accept(w.client, racing), 400, 'INVALID_LINK_TOKEN');
      expectError(await board.owner.post(`/api/boards/${board.projectId}/invitations/${racing.invitationId}/resend`), 400, 'INVALID_LINK_TOKEN');
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

    /** The board's invitations by status, and the mails sent to `email` about sharing. */
    const pendingOf = async (projectId: string, email: string) => (await srv().store.invitations.find({ projectId, email, status: 'pending' })).length;
    const mailsTo = (email: string) => srv().mail.sent.filter((m) => m.to === email).length;
    const resend = (by: Client, projectId: string, invitationId: string) => by.post(`/api/boards/${projectId}/invitations/${invitationId}/resend`);

    it('counts every resend in the hourly budget: one invitation resent again and again stops at 50 mails', async () => {
      const board = await newBoard(url());
      const address = `resent-${board.projectId}@example.com`;
      const created = await invite(board.owner, board.projectId, address);
      for (let n = 1; n < 50; n++) {
        srv().advance(61_000);
        const res = await resend(board.owner, board.projectId, created.body.invitation.invitationId);
        expect(res.status, `resend ${n}: ${res.text}`).toBe(200);
      }
      expect(mailsTo(address)).toBe(50);
      srv().advance(61_000);
      const refused = await resend(board.owner, board.projectId, created.body.invitation.invitationId);
      expectError(refused, 429, 'INVITATION_LIMIT');
      expect(refused.body.error.message).toContain('an hour');
      // The first mail leaves the hour 3600 s after it was sent; 50 × 61 s have passed on the server's clock, and a few real ones.
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(3600 - 50 * 61);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3600 - 50 * 61 - 20);
      expectError(await invite(board.owner, board.projectId, `other-${board.projectId}@example.com`), 429, 'INVITATION_LIMIT');
      expect(mailsTo(address)).toBe(50);
      srv().advance((3600 - 50 * 61) * 1000);
      expect((await resend(board.owner, board.projectId, created.body.invitation.invitationId)).status).toBe(200);
    });

    it('mails an address at most once a minute, also when its invitation is revoked and sent again', async () => {
      const board = await newBoard(url());
      const address = `again-${board.projectId}@example.com`;
      const first = await invite(board.owner, board.projectId, address);
      expect(first.status).toBe(201);
      expect((await board.owner.post(`/api/boards/${board.projectId}/invitations/${first.body.invitation.invitationId}/revoke`)).status).toBe(200);
      const refused = await invite(board.owner, board.projectId, address);
      expectError(refused, 429, 'INVITATION_LIMIT');
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(mailsTo(address)).toBe(1);
      expect(await pendingOf(board.projectId, address)).toBe(0);
      srv().advance(61_000);
      expect((await invite(board.owner, board.projectId, address)).status).toBe(201);
      expect(mailsTo(address)).toBe(2);
    });

    it('takes the budget atomically: of 90 concurrent invitations 50 are mailed, and 4 concurrent ones of one address leave one live link', async () => {
      const board = await newBoard(url());
      const results = await Promise.all(Array.from({ length: 90 }, (_, n) => invite(board.owner, board.projectId, `rush-${n}-${board.projectId}@example.com`)));
      const byStatus = (list: Res[]) => list.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
      expect(byStatus(results)).toEqual({ 201: 50, 429: 40 });
      for (const refused of results.filter((r) => r.status === 429)) expectError(refused, 429, 'INVITATION_LIMIT');
      expect(srv().mail.sent.filter((m) => m.to.startsWith('rush-') && m.to.endsWith(`-${board.projectId}@example.com`))).toHaveLength(50);
      expect(await srv().store.invitations.count({ projectId: board.projectId, status: 'pending' })).toBe(50);

      const other = await newBoard(url());
      const address = `same-${other.projectId}@example.com`;
      const same = await Promise.all(Array.from({ length: 4 }, () => invite(other.owner, other.projectId, address, 'viewer')));
      expect(byStatus(same)).toEqual({ 201: 1, 429: 3 });
      expect(await pendingOf(other.projectId, address)).toBe(1);
      expect(mailsTo(address)).toBe(1);
      // After the minute, two at once still leave one live link: the later one replaces the earlier.
      srv().advance(61_000);
      const twice = await Promise.all([invite(other.owner, other.projectId, address), invite(other.owner, other.projectId, address)]);
      expect(byStatus(twice)).toEqual({ 201: 1, 429: 1 });
      expect(await pendingOf(other.projectId, address)).toBe(1);
    });

    it('draws transfer offers on the same budget: the hour’s 50 mails and one a minute per address', async () => {
      const board = await newBoard(url());
      const heir = await person();
      await join(board, heir, 'member');
      const offer = () => board.owner.post(`/api/boards/${board.projectId}/transfers`, { toUserId: heir.accountId });
      // Their invitation was mailed a moment ago.
      expectError(await offer(), 429, 'INVITATION_LIMIT');
      srv().advance(61_000);
      for (let n = 0; n < 49; n++) expect((await invite(board.owner, board.projectId, `fill-${n}-${board.projectId}@example.com`)).status).toBe(201);
      const refused = await offer();
      expectError(refused, 429, 'INVITATION_LIMIT');
      expect(refused.body.error.message).toContain('an hour');
      expect(srv().mail.sent.filter((m) => m.to === heir.email && /^Take over/.test(m.subject))).toHaveLength(0);
      expect(await srv().store.transfers.count({ projectId: board.projectId })).toBe(0);

      srv().advance(3600_000);
      expect((await offer()).status).toBe(201);
      expectError(await offer(), 429, 'INVITATION_LIMIT');
      expect(srv().mail.sent.filter((m) => m.to === heir.email && /^Take over/.test(m.subject))).toHaveLength(1);
    });

    it('answers 503 SHARING_BUSY with Retry-After when the board’s mail budget is held too long elsewhere, sending and writing nothing', async () => {
      const board = await newBoard(url());
      const address = `busy-${board.projectId}@example.com`;
      const key = `sharing-mail:${board.projectId}`;
      await srv().store.accountLocks.insert({ _id: key, version: 1, holder: 'another node, stuck', until: Date.now() + 60_000 });
      try {
        const refused = await invite(board.owner, board.projectId, address);
        expectError(refused, 503, 'SHARING_BUSY');
        expect(refused.headers.get('retry-after')).toBe('1');
      } finally {
        await srv().store.accountLocks.delete(key);
      }
      expect(mailsTo(address)).toBe(0);
      expect(await srv().store.invitations.count({ projectId: board.projectId })).toBe(0);
      expect((await invite(board.owner, board.projectId, address)).status).toBe(201);
    });

    it('shows members’ addresses to admins and the owner only; the others see display names or a short stable id', async () => {
      const board = await newBoard(url());
      const ownerId = (await board.owner.get('/api/auth/me')).body.user.id as string;
      const [admin, member, viewer] = await Promise.all([person(), person(), person()]);
      await join(board, admin, 'admin');
      await join(board, member, 'member');
      await join(board, viewer, 'viewer');
      expect((await admin.client.request('PATCH', '/api/account/profile', { json: { displayName: 'Ada the admin' } })).status).toBe(200);
      const seenBy = async (client: Client) => Object.fromEntries(((await client.get(`/api/boards/${board.projectId}/members`)).body.members as { userId: string }[]).map((m) => [m.userId, m]));

      for (const [who, client] of [['viewer', viewer.client], ['member', member.client]] as const) {
        const seen = await seenBy(client);
        const self = who === 'viewer' ? viewer : member;
        expect(seen[ownerId], who).toMatchObject({ email: null, displayName: null, name: `member ${ownerId.slice(0, 8)}`, role: 'owner' });
        expect(seen[admin.accountId], who).toMatchObject({ email: null, displayName: 'Ada the admin', name: 'Ada the admin', role: 'admin' });
        expect(seen[self.accountId], who).toMatchObject({ email: self.email, name: self.email });
        const others = Object.values(seen).filter((m) => (m as { userId: string }).userId !== self.accountId);
        expect(JSON.stringify(others), who).not.toMatch(/@example\.com/);
      }
      for (const client of [admin.client, board.owner]) {
        const seen = await seenBy(client);
        expect(seen[member.accountId]).toMatchObject({ email: member.email, name: member.email });
        expect(seen[viewer.accountId]).toMatchObject({ email: viewer.email });
        expect(seen[admin.accountId]).toMatchObject({ email: admin.email, name: 'Ada the admin' });
      }
      // The same member as the viewer saw them keeps their short id on the next read.
      expect((await seenBy(viewer.client))[member.accountId]).toMatchObject({ name: `member ${member.accountId.slice(0, 8)}` });
    });

    it('lets only the owner make admins, and admins manage members and viewers only', async () => {
      const board = await newBoard(url());
      const [admin, other, member] = await Promise.all([person(), person(), person()]);
      await join(board, admin, 'admin');
      const ownerId = (await board.owner.get('/api/auth/me')).body.user.id as string;

      expectError(await invite(admin.client, board.projectId, other.email, 'admin'), 403, 'ROLE_REQUIRED');
      await join(board, member, 'member', admin.client);
      await join(board, other, 'admin');
      expectError(await setRole(admin.client, board.projectId, other.accountId, 'member'), 403, 'ROLE_REQUIRED');
      expectError(await setRole(admin.client, board.projectId, member.accountId, 'admin'), 403, 'ROLE_REQUIRED');
      expectError(await remove(admin.client, board.projectId, other.accountId), 403, 'ROLE_REQUIRED');
      expectError(await setRole(admin.client, board.projectId, ownerId, 'viewer'), 409, 'OWNER_IMMUTABLE');
      expectError(await remove(admin.client, board.projectId, ownerId), 409, 'OWNER_IMMUTABLE');
      expectError(await remove(board.owner, board.projectId, ownerId), 409, 'OWNER_IMMUTABLE');
      expectError(await setRole(board.owner, board.projectId, ownerId, 'admin'), 409, 'OWNER_IMMUTABLE');
      expectError(await setRole(board.owner, board.projectId, 'nobody', 'viewer'), 404, 'MEMBER_NOT_FOUND');
      expectError(await setRole(board.owner, board.projectId, member.accountId, 'owner'), 400, 'INVALID_INPUT');
      expectError(await remove(member.client, board.projectId, admin.accountId), 403, 'ROLE_REQUIRED');

      expect((await setRole(admin.client, board.projectId, member.accountId, 'viewer')).body.member).toMatchObject({ userId: member.accountId, role: 'viewer' });
      expect((await setRole(board.owner, board.projectId, other.accountId, 'member')).body.member.role).toBe('member');
      expect(statusOf(await remove(admin.client, board.projectId, other.accountId))).toBe(204);
      expectError(await remove(admin.client, board.projectId, other.accountId), 404, 'MEMBER_NOT_FOUND');
      // Anyone may leave.
      expect(statusOf(await remove(member.client, board.projectId, member.accountId))).toBe(204);
      expect(statusOf(await remove(admin.client, board.projectId, admin.accountId))).toBe(204);
      expect(await listed(admin.client, board.projectId)).toBeUndefined();
      expect((await board.owner.get(`/api/boards/${board.projectId}/members`)).body.members.map((m: { role: string }) => m.role)).toEqual(['owner']);
    });

    it('applies a lower role and a removal on the next request: tokens narrowed then revoked, sockets unsubscribed and closed', async () => {
      const board = await newBoard(url());
      const alice = await person();
      await join(board, alice, 'admin');
      const boardPath = (path: string) => `${path}?projectId=${board.projectId}`;
      const issue = async (role?: string) => {
        const res = await alice.client.post('/api/accounts/tokens', { name: `agent-${role ?? 'default'}`, scope: 'workspace', projectId: board.projectId, ...(role ? { role } : {}) });
        expect(res.status, res.text).toBe(201);
        return { id: res.body.token.id as string, client: new Client(url(), { authorization: `Bearer ${res.body.secret}` }) };
      };
      const adminToken = await issue('admin');
      const memberToken = await issue();
      expect((await adminToken.client.post('/api/items', { title: 'first' })).status).toBe(201);
      expect((await adminToken.client.post('/api/items/reorder', { workIds: ['W-1'] })).status).toBe(200);

      const sessionSocket = await openSocket(url(), cookieOf(alice.client));
      const tokenSocket = await openSocket(url(), { authorization: adminToken.client.defaults.authorization! });
      expect(await subscribed(sessionSocket, board.projectId)).toMatchObject({ type: 'subscribed', role: 'admin' });
      expect(await subscribed(tokenSocket, board.projectId)).toMatchObject({ type: 'subscribed', role: 'admin' });

      // admin → member
      expect((await setRole(board.owner, board.projectId, alice.accountId, 'member')).status).toBe(200);
      for (const socket of [sessionSocket, tokenSocket]) {
        expect(await socket.next((m) => m.type === 'unsubscribed')).toMatchObject({ boardId: board.projectId, reason: expect.stringContaining('member') });
      }
      expectError(await alice.client.get(`/api/boards/${board.projectId}/invitations`), 403, 'ROLE_REQUIRED');
      expectError(await adminToken.client.post('/api/items/reorder', { workIds: ['W-1'] }), 403, 'ROLE_REQUIRED');
      expect((await srv().store.tokens.get(adminToken.id))!.role).toBe('member');
      expect((await alice.client.get(boardPath('/api/status'))).status).toBe(200);
      expect(await listed(alice.client, board.projectId)).toMatchObject({ role: 'member' });
      expect(await subscribed(tokenSocket, board.projectId)).toMatchObject({ type: 'subscribed', role: 'member' });

      // member → viewer: both tokens narrowed to viewer
      expect((await setRole(board.owner, board.projectId, alice.accountId, 'viewer')).status).toBe(200);
      await tokenSocket.next((m) => m.type === 'unsubscribed');
      expectError(await memberToken.client.post('/api/items', { title: 'second' }), 403, 'ROLE_REQUIRED');
      expect((await memberToken.client.get('/api/status')).status).toBe(200);
      expect((await srv().store.tokens.find({ accountId: alice.accountId, boardId: board.projectId })).map((t) => t.role)).toEqual(['viewer', 'viewer']);
      // A raise gives tokens nothing back: they stay as narrowed.
      expect((await setRole(board.owner, board.projectId, alice.accountId, 'member')).status).toBe(200);
      expectError(await memberToken.client.post('/api/items', { title: 'third' }), 403, 'ROLE_REQUIRED');
      expect(await subscribed(sessionSocket, board.projectId)).toMatchObject({ type: 'subscribed', role: 'member' });

      // removal
      expect((await remove(board.owner, board.projectId, alice.accountId)).status).toBe(204);
      expect(await sessionSocket.next((m) => m.type === 'unsubscribed')).toMatchObject({ boardId: board.projectId, reason: expect.stringContaining('no longer') });
      expect((await tokenSocket.closed).code).toBe(4001);
      expectError(await alice.client.get(boardPath('/api/status')), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await memberToken.client.get('/api/status'), 401, 'INVALID_SERVICE_TOKEN');
      expect((await srv().store.tokens.find({ accountId: alice.accountId, boardId: board.projectId })).every((t) => t.revoked)).toBe(true);
      expect(await listed(alice.client, board.projectId)).toBeUndefined();
      expect(await subscribed(sessionSocket, board.projectId)).toMatchObject({ type: 'error', error: { code: 'PROJECT_SCOPE_DENIED' } });
      sessionSocket.ws.close();
    });

    it('transfers a board: the recipient becomes owner within their board limit, the previous owner admin, billing stays with the board', async () => {
      const board = await newBoard(url());
      const ownerId = (await board.owner.get('/api/auth/me')).body.user.id as string;
      const [heir, outsider] = await Promise.all([person(), person()]);
      await join(board, heir, 'member');
      const offer = (to: string, by = board.owner) => by.post(`/api/boards/${board.projectId}/transfers`, { toUserId: to });
      const take = (transferId: string, by: Client) => by.post(`/api/boards/transfers/${transferId}/accept`);

      expectError(await offer(outsider.accountId), 404, 'MEMBER_NOT_FOUND');
      expectError(await offer(ownerId), 400, 'INVALID_INPUT');
      expectError(await offer(ownerId, heir.client), 403, 'ROLE_REQUIRED');
      const record = billingRecord(board.projectId, ownerId, { subscriptionId: 'sub_kept', status: 'active', interval: 'month', priceId: 'price_m' });
      await srv().store.billing.insert(record);

      srv().advance(61_000); // the heir was mailed their invitation: one mail a minute per address
      const opened = await offer(heir.accountId);
      expect(opened.status, opened.text).toBe(201);
      const transferId = opened.body.transfer.transferId as string;
      expect(opened.body.transfer).toMatchObject({ projectId: board.projectId, fromUserId: ownerId, toUserId: heir.accountId, status: 'pending' });
      const mail = await srv().mail.next(heir.email, /^Take over the board/);
      expect(mail.text).toContain(`${PUBLIC_URL}/boards/${board.projectId}/members`);
      expect((await heir.client.get(`/api/boards/${board.projectId}/members`)).body.transfer).toMatchObject({ transferId, toUserId: heir.accountId });
      expectError(await take(transferId, outsider.client), 404, 'TRANSFER_NOT_FOUND');
      expectError(await take(transferId, board.owner), 404, 'TRANSFER_NOT_FOUND');

      // The heir owns their own default board; two more reach the Free limit of 3.
      const extra = [];
      for (const n of [1, 2]) extra.push((await heir.client.post('/api/projects', { name: `heir ${n}` })).body.projectId as string);
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
      expect(roles.members.map((m: { userId: string; role: string }) => [m.userId, m.role])).toEqual([[heir.accountId, 'owner'], [ownerId, 'admin']]);
      expect(roles.transfer).toBeNull();

      // Billing stays with the board and answers to its new owner.
      expect(await srv().store.billing.get(board.projectId)).toMatchObject({ accountId: heir.accountId, customerId: record.customerId, subscriptionId: 'sub_kept', status: 'active' });
      expect((await heir.client.get(`/api/account/billing?projectId=${board.projectId}`)).body).toMatchObject({ projectId: board.projectId, subscription: { status: 'active' } });
      expectError(await board.owner.get(`/api/account/billing?projectId=${board.projectId}`), 403, 'PROJECT_SCOPE_DENIED');
      // The previous owner is an admin now: the owner is out of their reach.
      expectError(await remove(board.owner, board.projectId, heir.accountId), 409, 'OWNER_IMMUTABLE');
      expectError(await offer(heir.accountId), 403, 'ROLE_REQUIRED');

      // An offer lapses after 7 days.
      const back = await offer(ownerId, heir.client);
      expect(back.status).toBe(201);
      srv().advance(SHARING_TTL_MS + 1000);
      expectError(await take(back.body.transfer.transferId, board.owner), 404, 'TRANSFER_NOT_FOUND');
    });

    /** A board whose owner offered it to `heir`, a member. */
    const offered = async () => {
      const board = await newBoard(url());
      const ownerId = (await board.owner.get('/api/auth/me')).body.user.id as string;
      const heir = await person();
      await join(board, heir, 'member');
      srv().advance(61_000); // the heir was mailed their invitation: one mail a minute per address
      const opened = await board.owner.post(`/api/boards/${board.projectId}/transfers`, { toUserId: heir.accountId });
      expect(opened.status, opened.text).toBe(201);
      return { board, ownerId, heir, transferId: opened.body.transfer.transferId as string };
    };
    const takeOver = (transferId: string, by: Client) => by.post(`/api/boards/transfers/${transferId}/accept`);

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
      expect(listing.members.map((m: { userId: string; role: string }) => [m.userId, m.role])).toEqual([[ownerId, 'owner']]);
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

    it('derives the owner from the board alone: a membership saying owner for anyone else counts as admin', async () => {
      const board = await newBoard(url());
      const ownerId = (await board.owner.get('/api/auth/me')).body.user.id as string;
      const stray = await person();
      await join(board, stray, 'member');
      // As a transfer cut short could leave them: the stray's membership says owner, the owner's says admin.
      await modify(srv().store.members, `${board.projectId}:${stray.accountId}`, () => ({ role: 'owner' as const }));
      await modify(srv().store.members, `${board.projectId}:${ownerId}`, () => ({ role: 'admin' as const }));

      const seen = (await stray.client.get(`/api/boards/${board.projectId}/members`)).body;
      expect(seen.role).toBe('admin');
      expect(seen.members.map((m: { userId: string; role: string }) => [m.userId, m.role])).toEqual([[ownerId, 'owner'], [stray.accountId, 'admin']]);
      expect((await stray.client.get(`/api/boards/${board.projectId}/invitations`)).status).toBe(200);
      expectError(await stray.client.post(`/api/boards/${board.projectId}/transfers`, { toUserId: ownerId }), 403, 'ROLE_REQUIRED');
      expectError(await stray.client.get(`/api/account/billing?projectId=${board.projectId}`), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await remove(stray.client, board.projectId, ownerId), 409, 'OWNER_IMMUTABLE');

      expect((await board.owner.get(`/api/boards/${board.projectId}/members`)).body.role).toBe('owner');
      expect((await board.owner.get(`/api/account/billing?projectId=${board.projectId}`)).status).toBe(200);
      expectError(await setRole(board.owner, board.projectId, ownerId, 'member'), 409, 'OWNER_IMMUTABLE');
      // No transfer of theirs is under way: the owner may set the stray's membership right.
      expect((await setRole(board.owner, board.projectId, stray.accountId, 'member')).body.member).toMatchObject({ role: 'member' });
      expect(statusOf(await remove(board.owner, board.projectId, stray.accountId))).toBe(204);
    });

    it('finishes a transfer cut short before the owner moved when the recipient accepts again; meanwhile the sender still owns the board', async () => {
      const { board, ownerId, heir, transferId } = await offered();
      await srv().store.billing.insert(billingRecord(board.projectId, ownerId, { subscriptionId: 'sub_cut', status: 'active', interval: 'month', priceId: 'price_m' }));
      failOnce(srv().store.projects, 'update');
      expectError(await takeOver(transferId, heir.client), 503, 'AUTH_UNAVAILABLE');
      expect((await srv().store.transfers.get(transferId))!.status).toBe('accepted');
      expect(await srv().store.projects.get(board.projectId)).toMatchObject({ ownerId });

      // One owner meanwhile: the sender. The recipient's membership already says owner, which counts as admin, and cannot be removed.
      expect((await board.owner.get(`/api/boards/${board.projectId}/members`)).body.members.map((m: { role: string }) => m.role)).toEqual(['owner', 'admin']);
      expectError(await heir.client.post(`/api/boards/${board.projectId}/transfers`, { toUserId: ownerId }), 403, 'ROLE_REQUIRED');
      expectError(await remove(board.owner, board.projectId, heir.accountId), 409, 'OWNER_IMMUTABLE');
      expectError(await remove(heir.client, board.projectId, heir.accountId), 409, 'OWNER_IMMUTABLE');
      // Both see the takeover under way, so the recipient knows to finish it.
      for (const client of [board.owner, heir.client]) {
        expect((await client.get(`/api/boards/${board.projectId}/members`)).body.transfer).toMatchObject({ transferId, toUserId: heir.accountId, status: 'accepted' });
      }

      const finished = await takeOver(transferId, heir.client);
      expect(finished.status, finished.text).toBe(200);
      expect(finished.body.transfer).toMatchObject({ transferId, status: 'accepted' });
      expect(await srv().store.projects.get(board.projectId)).toMatchObject({ ownerId: heir.accountId });
      expect(await srv().store.members.get(`${board.projectId}:${ownerId}`)).toMatchObject({ role: 'admin' });
      expect(await srv().store.billing.get(board.projectId)).toMatchObject({ accountId: heir.accountId, subscriptionId: 'sub_cut' });
      expect(await listed(heir.client, board.projectId)).toMatchObject({ role: 'owner', owned: true });
      expect(await listed(board.owner, board.projectId)).toMatchObject({ role: 'admin', owned: false });
      expect((await heir.client.get(`/api/boards/${board.projectId}/members`)).body.transfer).toBeNull();
      expectError(await takeOver(transferId, heir.client), 404, 'TRANSFER_NOT_FOUND');
    });

    it('finishes a transfer cut short after the owner moved; meanwhile the recipient alone owns the board, and account deletion follows projects.ownerId', async () => {
      const { board, ownerId, heir, transferId } = await offered();
      const ownerEmail = (await board.owner.get('/api/auth/me')).body.user.email as string;
      await srv().store.billing.insert(billingRecord(board.projectId, ownerId, { subscriptionId: 'sub_half', status: 'active', interval: 'month', priceId: 'price_m' }));
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
      expectError(await board.owner.post(`/api/boards/${board.projectId}/transfers`, { toUserId: heir.accountId }), 403, 'ROLE_REQUIRED');
      expectError(await board.owner.get(`/api/account/billing?projectId=${board.projectId}`), 403, 'PROJECT_SCOPE_DENIED');
      expect((await heir.client.get(`/api/account/billing?projectId=${board.projectId}`)).body).toMatchObject({ projectId: board.projectId, subscription: { status: 'active' } });
      expect((await heir.client.get(`/api/boards/${board.projectId}/members`)).body.transfer).toMatchObject({ transferId, status: 'accepted' });
      // Deleting the recipient's account must end the board's live subscription first (no provider here: refused, nothing deleted)...
      expectError(await heir.client.request('DELETE', '/api/account', { json: { confirmEmail: heir.email, currentPassword: heir.password } }), 502, 'PROVIDER_UNAVAILABLE');
      expect(await srv().store.projects.get(board.projectId)).toMatchObject({ ownerId: heir.accountId });
      // ...while the sender's account no longer answers for it.
      const other = new Client(url());
      expect((await other.post('/api/auth/login', { email: ownerEmail, password: heir.password })).status).toBe(200);

      const finished = await takeOver(transferId, heir.client);
      expect(finished.status, finished.text).toBe(200);
      expect(await srv().store.members.get(`${board.projectId}:${ownerId}`)).toMatchObject({ role: 'admin' });
      expect(await srv().store.billing.get(board.projectId)).toMatchObject({ accountId: heir.accountId });
      expectError(await takeOver(transferId, heir.client), 404, 'TRANSFER_NOT_FOUND');
      const gone = await other.request('DELETE', '/api/account', { json: { confirmEmail: ownerEmail, currentPassword: heir.password } });
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
      const roles = Object.fromEntries((await srv().store.members.find({ projectId: board.projectId })).map((m) => [m.accountId, m.role]));
      expect(roles).toEqual({ [ownerId]: 'admin', [heir.accountId]: 'admin', [other.accountId]: 'owner' });
    });

    it('keeps the link alive when the membership cannot be written: the same link works on the next try', async () => {
      const board = await newBoard(url());
      const invitee = await person();
      expect((await invite(board.owner, board.projectId, invitee.email)).status).toBe(201);
      const link = await linkFor(invitee.email);
      failOnce(srv().store.members, 'insert');
      expectError(await accept(invitee.client, link), 503, 'AUTH_UNAVAILABLE');
      expect(await srv().store.invitations.get(link.invitationId)).toMatchObject({ status: 'pending', acceptedBy: null, acceptedAt: null });
      expect(await srv().store.members.get(`${board.projectId}:${invitee.accountId}`)).toBeNull();
      const again = await accept(invitee.client, link);
      expect(again.status, again.text).toBe(200);
      expect(await srv().store.invitations.get(link.invitationId)).toMatchObject({ status: 'accepted', acceptedBy: invitee.accountId });
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
      const filler = Array.from({ length: 499 }, (_, n) => ({ _id: `${board.projectId}:filler-${n}`, version: 1, projectId: board.projectId, accountId: `filler-${n}`, role: 'viewer' as const, acceptedAt: 1 }));
      for (let at = 0; at < filler.length; at += 50) await Promise.all(filler.slice(at, at + 50).map((m) => srv().store.members.insert(m)));
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

    /** Runs `meanwhile` when the next accept is about to take its invitation, then lets that accept go on. */
    const beforeTheTake = (meanwhile: () => Promise<void>) => {
      const invitations = srv().store.invitations;
      const original = invitations.update;
      invitations.update = async (...args: Parameters<typeof original>) => {
        invitations.update = original;
        await meanwhile();
        return original.apply(invitations, args);
      };
    };

    it('makes a link single-use by its version check alone: the invited account on a second session cannot use it again, even once the first membership is gone', async () => {
      const board = await newBoard(url());
      const invitee = await person();
      const second = new Client(url());
      expect((await second.post('/api/auth/login', { email: invitee.email, password: invitee.password })).status).toBe(200);
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
        expect((await first.client.post('/api/account/email', { currentPassword: first.password, newEmail: `moved-${invited}` })).status).toBe(200);
        other = new Client(url());
        expect((await other.post('/api/auth/signup', { email: invited, password: first.password })).status).toBe(201);
        await verifyEmail(srv(), invited);
        const taken = await accept(other, link);
        expect(taken.status, taken.text).toBe(200);
      });
      expectError(await accept(first.client, link), 400, 'INVALID_LINK_TOKEN');
      const members = await srv().store.members.find({ projectId: board.projectId });
      expect(members.map((m) => m.accountId).sort()).toEqual([...new Set(members.map((m) => m.accountId))].sort());
      expect(members).toHaveLength(2);
      expect(await srv().store.members.get(`${board.projectId}:${first.accountId}`)).toBeNull();
      const otherId = (await other!.get('/api/auth/me')).body.user.id as string;
      expect(await srv().store.invitations.get(link.invitationId)).toMatchObject({ status: 'accepted', acceptedBy: otherId });
    });

    it('lets exactly one of two concurrent accepts of one link succeed; the other learns the link was used', async () => {
      for (let round = 0; round < 3; round++) {
        const board = await newBoard(url());
        const invitee = await person();
        const second = new Client(url());
        expect((await second.post('/api/auth/login', { email: invitee.email, password: invitee.password })).status).toBe(200);
        expect((await invite(board.owner, board.projectId, invitee.email)).status).toBe(201);
        const link = await linkFor(invitee.email);
        const results = await Promise.all([accept(invitee.client, link), accept(second, link)]);
        expect(results.map(statusOf).sort()).toEqual([200, 400]);
        expectError(results.find((r) => r.status !== 200)!, 400, 'INVALID_LINK_TOKEN');
        expect(await srv().store.members.count({ projectId: board.projectId })).toBe(2);
        expect((await srv().store.invitations.get(link.invitationId))!.status).toBe('accepted');
      }
    });
  });
}
