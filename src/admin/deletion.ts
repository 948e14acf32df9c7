// Account deletion for everyone (DOMAIN.md "Operators"): the owner's own DELETE /api/account and an
// operator's delete do the same. At once: live subscriptions cancelled (first: when that fails,
// nothing changes), the account marked deleted (sign-in refused), every session and token revoked
// with the enrollment codes it made and its device approvals not yet collected, and the boards it
// owns closed to their members (BOARD_CLOSED). The data is kept 30 days, in which a restore undoes
// all of it but the revoked credentials; then the sweep purges it, as an operator's purge does at
// once, with what account deletion always removed (purgeAccount). Each answers the notices that
// close what it ended on every node (closing): the callers send them, and decide nothing.
import { revokeIssued } from '../accounts/credentials.js';
import { purgeAccount } from '../accounts/service.js';
import type { RevokedNotice } from '../auth/access-notices.js';
import { AppError } from '../errors/app-error.js';
import { DAY_MS } from '../plans.js';
import { modify, type AccountRecord, type Store } from '../../store/ports/store.js';

export const DELETION_RETENTION_MS = 30 * DAY_MS;
/** Marks an account whose purge has begun: due to the sweep at once (a purge cut short is finished), past any restore. */
const PURGING = 0;
const SWEEP_BATCH = 100;
const SWEEP_ROUNDS = 50;

export interface Deleted {
  account: AccountRecord;
  /** The boards it owns, now closed (their sockets are the caller's to unsubscribe). */
  boards: string[];
  /** Deleted before: this call only made sure of the rest (credentials revoked, boards closed). */
  already: boolean;
  /** What to tell every node (closing). */
  notices: RevokedNotice[];
}

export interface Swept {
  /** The accounts purged. */
  accounts: string[];
  /** The boards deleted with them. */
  boards: string[];
  /** What to tell every node (closing). */
  notices: RevokedNotice[];
}

export interface Purged {
  /** The boards deleted with the account. */
  boards: string[];
  /** What to tell every node (closing). */
  notices: RevokedNotice[];
}

/**
 * What a deletion closes, on every node: the account's sockets, its tokens' by id (a socket is
 * known by the account its token had when it opened, and a token moves with a board its account
 * takes over), and every socket on the boards it owned.
 */
export function closing(accountId: string, tokenIds: string[], boards: readonly string[]): RevokedNotice[] {
  return [
    { kind: 'revoked', accountId, tokenIds },
    ...boards.map((boardId): RevokedNotice => ({ kind: 'revoked', boardId })),
  ];
}

export class AccountDeletion {
  constructor(
    private readonly store: Store,
    /** Cancels the account's live subscriptions at the provider (BillingService.cancelLiveSubscriptions); throws to refuse. */
    private readonly cancelSubscriptions: (accountId: string, now: number) => Promise<void>,
  ) {}

  /** Deletes the account as its owner or an operator; safe to run again (a run cut short is finished). */
  async delete(accountId: string, by: 'owner' | 'operator', now: number): Promise<Deleted> {
    const found = await this.store.accounts.get(accountId);
    if (!found) throw new AppError('NOT_FOUND', 'No account has that id.');
    const already = found.deletedAt != null;
    if (!already) await this.cancelSubscriptions(accountId, now);
    const account = await modify(this.store.accounts, accountId, (a) =>
      a.deletedAt != null ? null : { deletedAt: now, deletedBy: by, purgeAfter: now + DELETION_RETENTION_MS },
    );
    if (!account) throw new AppError('NOT_FOUND', 'No account has that id.');
    const { tokenIds } = await revokeIssued(this.store, accountId, now);
    const boards = await this.markBoards(accountId, accountId);
    return { account, boards, already, notices: closing(accountId, tokenIds, boards) };
  }

  /** Undoes a deletion within its 30 days: sign-in allowed, boards open. Revoked credentials stay revoked. */
  async restore(accountId: string, now: number): Promise<{ account: AccountRecord; boards: string[] }> {
    const found = await this.store.accounts.get(accountId);
    if (!found) throw new AppError('NOT_FOUND', 'No account has that id.');
    restorable(found, now);
    // Boards first: a restore cut short leaves the account deleted (and restorable), never open boards behind a closed account's back.
    const boards = await this.markBoards(accountId, null);
    const account = await modify(this.store.accounts, accountId, (a) => {
      restorable(a, now);
      return { deletedAt: null, deletedBy: null, purgeAfter: null };
    });
    if (!account) throw new AppError('NOT_FOUND', 'No account has that id.');
    return { account, boards };
  }

  /**
   * Removes the account's data now. An account not deleted yet is deleted first (its subscriptions
   * cancelled, or nothing happens). `confirm` must be the account's exact email.
   */
  async purge(accountId: string, confirm: string, now: number): Promise<Purged> {
    const found = await this.store.accounts.get(accountId);
    if (!found) throw new AppError('NOT_FOUND', 'No account has that id.');
    if (confirm !== found.email)
      throw new AppError('ACCOUNT_DELETE_CONFIRM_MISMATCH', 'confirm must be the account’s exact email.');
    if (found.deletedAt == null) await this.cancelSubscriptions(accountId, now);
    const marked = await modify(this.store.accounts, accountId, (a) =>
      a.purgeAfter === PURGING
        ? null
        : { deletedAt: a.deletedAt ?? now, deletedBy: a.deletedBy ?? 'operator', purgeAfter: PURGING },
    );
    if (!marked) throw new AppError('NOT_FOUND', 'No account has that id.');
    return this.purgeNow(accountId, now);
  }

  /** Purges every deleted account whose 30 days are over (and finishes purges cut short). */
  async sweep(now: number): Promise<Swept> {
    const result: Swept = { accounts: [], boards: [], notices: [] };
    for (let round = 0; round < SWEEP_ROUNDS; round++) {
      const due = await this.store.accounts.find(
        { purgeAfter: { $gte: PURGING, $lte: now } },
        {
          sort: [
            ['purgeAfter', 1],
            ['_id', 1],
          ],
          limit: SWEEP_BATCH,
        },
      );
      let progressed = false;
      for (const account of due) {
        // Marked first, version-checked: a restore that landed since wins, and one after finds the purge begun.
        const held =
          account.purgeAfter === PURGING
            ? account
            : await this.store.accounts.update(account._id, account.version, { purgeAfter: PURGING });
        if (!held) continue;
        const purged = await this.purgeNow(account._id, now);
        result.boards.push(...purged.boards);
        result.notices.push(...purged.notices);
        result.accounts.push(account._id);
        progressed = true;
      }
      if (due.length < SWEEP_BATCH || !progressed) break;
    }
    return result;
  }

  /**
   * Purges the account, its tokens read first: a token revoked earlier may still hold a socket a
   * notice missed. What it issued is revoked first, as its deletion revokes it: an account purged
   * while live was never deleted, and the purge keeps the tokens of a board it handed on while it
   * still holds the owner's membership there (purgeAccount), which must not act on after it.
   */
  private async purgeNow(accountId: string, now: number): Promise<Purged> {
    await revokeIssued(this.store, accountId, now);
    const tokenIds = (await this.store.tokens.select({ accountId }, ['_id'])).map((t) => t._id);
    const boards = await purgeAccount(this.store, accountId);
    return { boards, notices: closing(accountId, tokenIds, boards) };
  }

  /** Marks (or, with null, clears the mark of) every board the account owns; answers their ids. */
  private async markBoards(accountId: string, deletedOwner: string | null): Promise<string[]> {
    const owned = await this.store.projects.select({ ownerId: accountId }, ['deletedOwner']);
    for (const p of owned) {
      if ((p.deletedOwner ?? null) !== deletedOwner)
        await modify(this.store.projects, p._id, (cur) => (cur.ownerId !== accountId ? null : { deletedOwner }));
    }
    return owned.map((p) => p._id);
  }
}

function restorable(account: AccountRecord, now: number): void {
  if (account.deletedAt == null || account.purgeAfter == null || account.purgeAfter <= now) {
    throw new AppError(
      'ACCOUNT_NOT_RESTORABLE',
      account.deletedAt == null ? 'The account is not deleted.' : 'The account’s 30 days are over: its purge is due.',
    );
  }
}
