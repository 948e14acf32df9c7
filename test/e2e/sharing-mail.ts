// The sharing mail budget over real HTTP: 50 mails an hour per board and one a minute per address,
// counted by the mails sent (resends, re-invitations and transfer offers included), taken
// atomically by concurrent requests, and a budget lock held elsewhere.
import { expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { type Res } from '../support/server.js';
import type { SharingKit } from './sharing-kit.js';

/**
 * The cases that send some fifty invitations one after another: about 2 s alone on the wire
 * server, past 30 s beside the other MongoDB suites in a full run.
 */
const BUDGET_CASE_MS = 120_000;

export function mailBudgetCases(kit: SharingKit): void {
  const { url, srv, person, invite, join, resend, pendingOf, mailsTo } = kit;

  it(
    'caps the invitation mail a board sends: 50 an hour, whoever they go to',
    { timeout: BUDGET_CASE_MS },
    async () => {
      const board = await newBoard(url());
      for (let n = 0; n < 50; n++)
        expect((await invite(board.owner, board.projectId, `crowd-${n}-${board.projectId}@example.com`)).status).toBe(
          201,
        );
      const refused = await invite(board.owner, board.projectId, `one-more-${board.projectId}@example.com`);
      expectError(refused, 429, 'INVITATION_LIMIT');
      // The slot that frees first is the oldest mail's, an hour after it was sent.
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3500);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
      const sent = (await board.owner.get(`/api/boards/${board.projectId}/invitations`)).body.invitations as {
        invitationId: string;
      }[];
      expectError(
        await board.owner.post(`/api/boards/${board.projectId}/invitations/${sent[0]!.invitationId}/resend`),
        429,
        'INVITATION_LIMIT',
      );
      srv().advance(3600_000 + 1000);
      expect((await invite(board.owner, board.projectId, `one-more-${board.projectId}@example.com`)).status).toBe(201);
    },
  );

  it(
    'counts every resend in the hourly budget: one invitation resent again and again stops at 50 mails',
    { timeout: BUDGET_CASE_MS },
    async () => {
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
      expectError(
        await invite(board.owner, board.projectId, `other-${board.projectId}@example.com`),
        429,
        'INVITATION_LIMIT',
      );
      expect(mailsTo(address)).toBe(50);
      srv().advance((3600 - 50 * 61) * 1000);
      expect((await resend(board.owner, board.projectId, created.body.invitation.invitationId)).status).toBe(200);
    },
  );

  it('mails an address at most once a minute, also when its invitation is revoked and sent again', async () => {
    const board = await newBoard(url());
    const address = `again-${board.projectId}@example.com`;
    const first = await invite(board.owner, board.projectId, address);
    expect(first.status).toBe(201);
    expect(
      (
        await board.owner.post(
          `/api/boards/${board.projectId}/invitations/${first.body.invitation.invitationId}/revoke`,
        )
      ).status,
    ).toBe(200);
    const refused = await invite(board.owner, board.projectId, address);
    expectError(refused, 429, 'INVITATION_LIMIT');
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(mailsTo(address)).toBe(1);
    expect(await pendingOf(board.projectId, address)).toBe(0);
    srv().advance(61_000);
    expect((await invite(board.owner, board.projectId, address)).status).toBe(201);
    expect(mailsTo(address)).toBe(2);
  });

  it(
    'takes the budget atomically: of 90 concurrent invitations 50 are mailed, and 4 concurrent ones of one address leave one live link',
    { timeout: BUDGET_CASE_MS },
    async () => {
      const board = await newBoard(url());
      const results = await Promise.all(
        Array.from({ length: 90 }, (_, n) =>
          invite(board.owner, board.projectId, `rush-${n}-${board.projectId}@example.com`),
        ),
      );
      const byStatus = (list: Res[]) =>
        list.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
      expect(byStatus(results)).toEqual({ 201: 50, 429: 40 });
      for (const refused of results.filter((r) => r.status === 429)) expectError(refused, 429, 'INVITATION_LIMIT');
      expect(
        srv().mail.sent.filter((m) => m.to.startsWith('rush-') && m.to.endsWith(`-${board.projectId}@example.com`)),
      ).toHaveLength(50);
      expect(await srv().store.invitations.count({ projectId: board.projectId, status: 'pending' })).toBe(50);

      const other = await newBoard(url());
      const address = `same-${other.projectId}@example.com`;
      const same = await Promise.all(
        Array.from({ length: 4 }, () => invite(other.owner, other.projectId, address, 'viewer')),
      );
      expect(byStatus(same)).toEqual({ 201: 1, 429: 3 });
      expect(await pendingOf(other.projectId, address)).toBe(1);
      expect(mailsTo(address)).toBe(1);
      // After the minute, two at once still leave one live link: the later one replaces the earlier.
      srv().advance(61_000);
      const twice = await Promise.all([
        invite(other.owner, other.projectId, address),
        invite(other.owner, other.projectId, address),
      ]);
      expect(byStatus(twice)).toEqual({ 201: 1, 429: 1 });
      expect(await pendingOf(other.projectId, address)).toBe(1);
    },
  );

  it(
    'draws transfer offers on the same budget: the hour’s 50 mails and one a minute per address',
    { timeout: BUDGET_CASE_MS },
    async () => {
      const board = await newBoard(url());
      const heir = await person();
      await join(board, heir, 'member');
      const offer = () => board.owner.post(`/api/boards/${board.projectId}/transfers`, { toUserId: heir.accountId });
      // Their invitation was mailed a moment ago.
      expectError(await offer(), 429, 'INVITATION_LIMIT');
      srv().advance(61_000);
      for (let n = 0; n < 49; n++)
        expect((await invite(board.owner, board.projectId, `fill-${n}-${board.projectId}@example.com`)).status).toBe(
          201,
        );
      const refused = await offer();
      expectError(refused, 429, 'INVITATION_LIMIT');
      expect(refused.body.error.message).toContain('an hour');
      expect(srv().mail.sent.filter((m) => m.to === heir.email && /^Take over/.test(m.subject))).toHaveLength(0);
      expect(await srv().store.transfers.count({ projectId: board.projectId })).toBe(0);

      srv().advance(3600_000);
      expect((await offer()).status).toBe(201);
      expectError(await offer(), 429, 'INVITATION_LIMIT');
      expect(srv().mail.sent.filter((m) => m.to === heir.email && /^Take over/.test(m.subject))).toHaveLength(1);
    },
  );

  it('answers 503 SHARING_BUSY with Retry-After when the board’s mail budget is held too long elsewhere, sending and writing nothing', async () => {
    const board = await newBoard(url());
    const address = `busy-${board.projectId}@example.com`;
    const key = `sharing-mail:${board.projectId}`;
    await srv().store.accountLocks.insert({
      _id: key,
      version: 1,
      holder: 'another node, stuck',
      until: Date.now() + 60_000,
    });
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
}
