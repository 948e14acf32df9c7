// The stamp revokeIssued (src/accounts/credentials.ts) sets on an account before it withdraws
// what the account issued: a code redemption or device delivery reads it after storing its token,
// so a revocation that began meanwhile is seen on any node. Apart from credentials.ts, which
// imports the enrollment codes it revokes, so that enrollment.ts may ask it without a cycle.
import type { Store } from '../../store/ports/store.js';

/**
 * Whether a token minted through a code or device approval the account made at `madeAt` may stand:
 * false when a revocation of all it issued began at or after it (read from the store, after the
 * token was stored, so a revocation under way or done meanwhile is seen on any node).
 */
export async function issuedSince(store: Store, accountId: string, madeAt: number): Promise<boolean> {
  const account = await store.accounts.get(accountId);
  return (account?.issuedRevokedAt ?? -Infinity) < madeAt;
}
