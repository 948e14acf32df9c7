// Revoking what an account issued: its sessions and tokens (the caller tells every node to close
// their sockets), and the one-time secrets that would mint more on its behalf later: enrollment
// codes it or its tokens made, device grants it approved that no agent has collected yet.
import { modify, type Store } from '../../store/ports/store.js';

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
 * any of its tokens) made, and the device grants it approved that are not delivered yet (denied,
 * so the waiting agent hears ACCESS_DENIED).
 */
export async function revokeIssued(store: Store, accountId: string): Promise<RevokedIssued> {
  const revoked = await revokeCredentials(store, accountId);
  const tokens = await store.tokens.select({ accountId }, ['_id'], { limit: TOKENS_READ });
  const makers = [`user:${accountId}`, ...tokens.map((t) => `token:${t._id}`)];
  const enrollments = await store.enrollments.deleteMany({ createdBy: { $in: makers } });
  const approved = await store.deviceGrants.select({ approvedBy: accountId, status: 'approved' }, ['_id']);
  let deviceGrants = 0;
  for (const { _id } of approved) {
    const grant = await modify(store.deviceGrants, _id, (g) =>
      g.status === 'approved' ? { status: 'denied' as const } : null,
    );
    if (grant?.status === 'denied') deviceGrants++;
  }
  return { ...revoked, enrollments, deviceGrants };
}

/**
 * Deletes every password-reset link the account was mailed: a password set (by a link, or by its
 * owner signed in) or an address moved leaves no older link that could set it again.
 */
export async function voidResetLinks(store: Store, accountId: string): Promise<void> {
  await store.linkTokens.deleteMany({ accountId, purpose: 'reset-password' });
}
