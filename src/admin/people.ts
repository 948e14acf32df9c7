// The operators' people desk (DOMAIN.md "Operators", people and access): reading one account's data,
// revoking its credentials or one token, and deleting, restoring or purging it. AccountsAdmin finds
// and reads, AccountDeletion deletes; this module tells every node to close what an action revoked
// and writes the one audit row per action (target `account:<id>` or `token:<id>`) before answering.
import type { RevokedNotice } from '../auth/access-notices.js';
import type { Store } from '../../store/ports/store.js';
import { revokeIssued, type RevokedIssued } from '../accounts/credentials.js';
import { AccountsAdmin, type AdminToken, type Page, type UserDetail, type UserRow } from './accounts.js';
import { auditOperatorAction, type OperatorCtx } from './audit.js';
import { AccountDeletion } from './deletion.js';

type Ctx = OperatorCtx;
type Revoke = (notice: RevokedNotice) => void;

/** An account as an action left it, with the boards the action closed, reopened or removed. */
export interface Closed {
  user: UserRow;
  boards: string[];
}

const target = (userId: string): string => `account:${userId}`;

export class PeopleDesk {
  private readonly accounts: AccountsAdmin;
  private readonly deletion: AccountDeletion;

  constructor(
    private readonly store: Store,
    /** Cancels the account's live subscriptions at the provider; throws to refuse a deletion. */
    cancelSubscriptions: (accountId: string, now: number) => Promise<void>,
    /** Tells every node to close a revoked credential's sockets. */
    private readonly revokeNotice: Revoke,
  ) {
    this.accounts = new AccountsAdmin(store);
    this.deletion = new AccountDeletion(store, cancelSubscriptions);
  }

  search(input: Parameters<AccountsAdmin['search']>[0]): Promise<Page<UserRow>> {
    return this.accounts.search(input);
  }

  /** One account's boards, tokens, billing and audit rows; the read is audited (`admin.user.view`). */
  async view(ctx: Ctx, userId: string): Promise<UserDetail> {
    const detail = await this.accounts.detail(userId);
    await auditOperatorAction(this.store, ctx, { action: 'user.view', target: target(detail.user.id) });
    return detail;
  }

  /** The account's tokens, a page; the read is audited (`admin.tokens.view`). */
  async tokens(ctx: Ctx, userId: string, page: { cursor?: string; limit: number }): Promise<Page<AdminToken>> {
    const tokens = await this.accounts.tokens(userId, page);
    await auditOperatorAction(this.store, ctx, { action: 'tokens.view', target: target(userId) });
    return tokens;
  }

  /**
   * Revokes everything the account issued: sessions, tokens, and the one-time secrets that would
   * mint tokens for it later (enrollment codes it or its tokens made, device approvals no agent
   * collected yet). Answers how many of each.
   */
  async revoke(ctx: Ctx, userId: string, reason: string): Promise<Omit<RevokedIssued, 'tokenIds'>> {
    const account = await this.accounts.account(userId);
    const { tokenIds, ...revoked } = await revokeIssued(this.store, account._id, ctx.now);
    // Its tokens by id too: a token that came to it with a board it took over opened its sockets as another account's.
    this.revokeNotice({ kind: 'revoked', accountId: account._id, tokenIds });
    await auditOperatorAction(this.store, ctx, {
      action: 'revoke',
      target: target(account._id),
      reason,
      data: revoked,
    });
    return revoked;
  }

  /** Revokes one service token; one revoked already answers `already` and is audited again. */
  async revokeToken(ctx: Ctx, tokenId: string, reason: string): Promise<{ token: AdminToken; already: boolean }> {
    const { token, accountId, already } = await this.accounts.revokeToken(tokenId);
    this.revokeNotice({ kind: 'revoked', tokenId: token.id });
    await auditOperatorAction(this.store, ctx, {
      action: 'token.revoke',
      target: `token:${token.id}`,
      reason,
      data: { accountId, already },
    });
    return { token, already };
  }

  /** Deletes the account as its own deletion does (AccountDeletion.delete), by an operator. */
  async delete(ctx: Ctx, userId: string, reason: string): Promise<Closed> {
    const account = await this.accounts.account(userId);
    const deleted = await this.deletion.delete(account._id, 'operator', ctx.now);
    for (const notice of deleted.notices) this.revokeNotice(notice);
    await auditOperatorAction(this.store, ctx, {
      action: 'delete',
      target: target(account._id),
      reason,
      data: { boards: deleted.boards, purgeAfter: deleted.account.purgeAfter, already: deleted.already },
    });
    return { user: await this.accounts.user(account._id), boards: deleted.boards };
  }

  /** Undoes a deletion within its days (AccountDeletion.restore). */
  async restore(ctx: Ctx, userId: string, reason: string): Promise<Closed> {
    const account = await this.accounts.account(userId);
    const restored = await this.deletion.restore(account._id, ctx.now);
    await auditOperatorAction(this.store, ctx, {
      action: 'restore',
      target: target(account._id),
      reason,
      data: { boards: restored.boards },
    });
    return { user: await this.accounts.user(account._id), boards: restored.boards };
  }

  /** Removes the account's data now (AccountDeletion.purge); `confirm` is its exact email. Answers the boards removed. */
  async purge(ctx: Ctx, userId: string, confirm: string, reason: string): Promise<string[]> {
    const account = await this.accounts.account(userId);
    const purged = await this.deletion.purge(account._id, confirm, ctx.now);
    for (const notice of purged.notices) this.revokeNotice(notice);
    await auditOperatorAction(this.store, ctx, {
      action: 'purge',
      target: target(account._id),
      reason,
      data: { boards: purged.boards },
    });
    return purged.boards;
  }
}
