// Revoking what an account issued: its sessions and tokens (the caller tells every node to close
// their sockets), and what would act on its word later: enrollment codes it or its tokens made,
// device grants it approved that no agent has collected yet, invitations and transfers it offered.
import { modify, type DeviceGrantRecord, type Store } from '../../store/ports/store.js';
import { revokeCodes } from './enrollment.js';

/** An account holds at most 500 tokens (revoked ones count), so one indexed read holds them all. */
const TOKENS_READ = 1000;
/** Passes over the live tokens: a token issued by one being revoked meanwhile is caught by the next. */
const TOKEN_PASSES = 5;

export interface Revoked {
  sessions: number;
  tokens: number;
  /** The tokens revoked now, for the notice that closes their sockets. */
  tokenIds: string[];
}

export interface RevokedIssued extends Revoked {
  enrollments: number;
  deviceGrants: number;
  /** Invitations it sent that nobody accepted yet (revoked), and ownership it offered (cancelled). */
  invitations: number;
  transfers: number;
}

/**
 * Revokes every session (deleted: a session is nothing but its row) and every token (marked
 * revoked, so the record stays for the console) of the account. Answers how many of each.
 */
export async function revokeCredentials(store: Store, accountId: string): Promise<Revoked> {
  const sessions = await store.sessions.deleteMany({ accountId });
  const tokenIds: string[] = [];
  for (let pass = 0; pass < TOKEN_PASSES; pass++) {
    const live = await store.tokens.select({ accountId, revoked: false }, ['_id'], { limit: TOKENS_READ });
    if (live.length === 0) break;
    for (const { _id } of live)
      if (await modify(store.tokens, _id, (t) => (t.revoked ? null : { revoked: true }))) tokenIds.push(_id);
  }
  return { sessions, tokens: tokenIds.length, tokenIds };
}

/**
 * Everything issued under the account until now: sessions, tokens, the enrollment codes it (or
 * any of its tokens) made (revoked, spent ones too), and the device grants it approved that are
 * not delivered yet (denied, so the waiting agent hears ACCESS_DENIED).
 *
 * Codes and grants are withdrawn before the tokens are revoked, and again after; then the tokens
 * once more. A redemption or a poll minting a token meanwhile either finds its code or grant
 * withdrawn when it comes to hand the token out (and revokes it: enrollment.ts, device-flow.ts),
 * or handed it out before the second withdrawal, so its token was stored before the last pass
 * over tokens and is among those revoked; a request making a code or approving meanwhile, before
 * its credential was revoked, is caught by the second withdrawal, or (landing after it) by the
 * stamp `issuedRevokedAt` set first: a token minted through a code or approval made before it is
 * withdrawn once stored (issuedSince, src/accounts/issued-since.ts).
 */
export async function revokeIssued(store: Store, accountId: string, now: number): Promise<RevokedIssued> {
  await modify(store.accounts, accountId, (a) => ({ issuedRevokedAt: Math.max(a.issuedRevokedAt ?? 0, now) }));
  const before = await withdrawMinters(store, accountId);
  const revoked = await revokeCredentials(store, accountId);
  const after = await withdrawMinters(store, accountId);
  const last = await revokeCredentials(store, accountId);
  return {
    sessions: revoked.sessions + last.sessions,
    tokens: revoked.tokens + last.tokens,
    tokenIds: [...revoked.tokenIds, ...last.tokenIds],
    enrollments: before.enrollments + after.enrollments,
    deviceGrants: before.deviceGrants + after.deviceGrants,
    ...(await withdrawOffers(store, accountId)),
  };
}

/** Revokes the enrollment codes the account or its tokens made and denies the grants it approved not delivered yet. */
async function withdrawMinters(
  store: Store,
  accountId: string,
): Promise<Pick<RevokedIssued, 'enrollments' | 'deviceGrants'>> {
  const tokens = await store.tokens.select({ accountId }, ['_id'], { limit: TOKENS_READ });
  const makers = [`user:${accountId}`, ...tokens.map((t) => `token:${t._id}`)];
  const enrollments = await revokeCodes(store, { createdBy: { $in: makers } });
  return { enrollments, deviceGrants: await denyApprovals(store, accountId) };
}

/** Denies the device grants the account approved that no poll has delivered: approved, or minting their token. Answers how many. */
async function denyApprovals(store: Store, accountId: string): Promise<number> {
  const undelivered = (g: DeviceGrantRecord) => g.status === 'approved' || g.status === 'minting';
  const approved = await store.deviceGrants.select(
    { approvedBy: accountId, status: { $in: ['approved', 'minting'] } },
    ['_id'],
  );
  let denied = 0;
  for (const { _id } of approved) {
    let deniedHere = false;
    const grant = await modify(store.deviceGrants, _id, (g) => {
      deniedHere = undelivered(g);
      return deniedHere ? { status: 'denied' as const } : null;
    });
    if (grant !== null && deniedHere) denied++;
  }
  return denied;
}

/**
 * Revokes the pending invitations the account sent and cancels the ownership it offered, on every
 * board it is a member of (where it could make them): each would let someone in later on its word.
 */
async function withdrawOffers(store: Store, accountId: string): Promise<{ invitations: number; transfers: number }> {
  let [invitations, transfers] = [0, 0];
  for (const { projectId } of await store.members.select({ accountId }, ['projectId'])) {
    for (const { _id } of await store.invitations.select({ projectId, invitedBy: accountId, status: 'pending' }, [
      '_id',
    ])) {
      const revoked = await modify(store.invitations, _id, (i) =>
        i.status === 'pending' ? { status: 'revoked' as const } : null,
      );
      if (revoked?.status === 'revoked') invitations++;
    }
    for (const { _id } of await store.transfers.select({ projectId, fromAccountId: accountId, status: 'pending' }, [
      '_id',
    ])) {
      const cancelled = await modify(store.transfers, _id, (t) =>
        t.status === 'pending' ? { status: 'cancelled' as const } : null,
      );
      if (cancelled?.status === 'cancelled') transfers++;
    }
  }
  return { invitations, transfers };
}

/**
 * Deletes every password-reset link the account was mailed: a password set (by a link, or by its
 * owner signed in) or an address moved leaves no older link that could set it again.
 */
export async function voidResetLinks(store: Store, accountId: string): Promise<void> {
  await store.linkTokens.deleteMany({ accountId, purpose: 'reset-password' });
}
