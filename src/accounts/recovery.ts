// Mailed single-use links: password reset and email verification. Only the token's sha256 is
// stored; consuming it is one conditional delete, so a link works once even under a race.
import { AppError } from '../errors/app-error.js';
import { newSecret, sha256 } from '../auth/authenticator.js';
import type { Mailer } from '../mail/mailer.js';
import type { RevokedNotice } from '../auth/access-notices.js';
import { modify, type AccountRecord, type LinkTokenRecord, type Store } from '../../store/ports/store.js';
import { canonicalEmail, checkPassword } from './service.js';
import { revokeIssued, voidResetLinks } from './credentials.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { RateLimiter, WindowSpec } from '../ratelimit/limiter.js';

export const RESET_TTL_MS = 60 * 60_000;
export const VERIFY_TTL_MS = 48 * 60 * 60_000;
/**
 * Mails of one kind (reset, verification) an account is sent in an hour: beyond, none goes out
 * and nothing says so, so a stranger who knows an address can neither flood its mailbox nor
 * learn from the answer whether it has an account.
 */
export const ACCOUNT_MAILS_PER_HOUR = 3;

type Purpose = LinkTokenRecord['purpose'];

/** Per account and address: a new address (change-email) gets confirmation links of its own. */
const mailBudget = (account: AccountRecord, purpose: Purpose): WindowSpec => ({
  key: `account-mail:${purpose}:${account._id}:${account.email}`,
  limit: ACCOUNT_MAILS_PER_HOUR,
  windowMs: 3_600_000,
});

const signInAsOwner = () =>
  new AppError(
    'INVALID_LINK_TOKEN',
    'This link confirms the address of another account: sign in as that account (with its password) and open the link again.',
  );

export interface Reset {
  accountId: string;
  /** What every node is to close: the account's sessions, or (an address the reset confirmed) all it issued. */
  notice: RevokedNotice;
}

export class Recovery {
  constructor(
    private readonly store: Store,
    private readonly mailer: Mailer,
    private readonly passwords: PasswordHasher,
    private readonly publicUrl: string,
    /** Counts each account's mails (ACCOUNT_MAILS_PER_HOUR), across nodes when it is Redis. */
    private readonly limiter: RateLimiter,
  ) {}

  /**
   * Mails a reset link when the address has an account and its budget of such mails allows;
   * says nothing either way. The new link is the account's only live one: older ones are voided.
   */
  async forgotPassword(email: string, now: number): Promise<void> {
    const account = await this.store.accounts.findOne({ email: canonicalEmail(email) });
    if (!account) return;
    if (!(await this.limiter.consume(mailBudget(account, 'reset-password'), now)).allowed) return;
    const token = await this.issue(account, 'reset-password', now);
    await this.keepNewestResetLink(account._id);
    await this.mailer.send({
      to: account.email,
      subject: 'Reset your board password',
      text: `Reset your password within an hour: ${this.publicUrl}/reset-password#token=${token}\nIf you did not ask for this, ignore this mail.`,
    });
  }

  /** Mails a confirmation link, within the account's budget of them; answers whether one went out. */
  async sendVerification(account: AccountRecord, now: number): Promise<boolean> {
    if (!(await this.limiter.consume(mailBudget(account, 'verify-email'), now)).allowed) return false;
    const token = await this.issue(account, 'verify-email', now);
    await this.mailer.send({
      to: account.email,
      subject: 'Verify your email',
      text:
        `Confirm this address within 48 hours: ${this.publicUrl}/verify-email#token=${token}\n` +
        'If you did not sign up or ask for this, ignore this mail: the link does nothing unless it is opened signed in to the account.',
    });
    return true;
  }

  /**
   * Sets the new password, voids the account's other reset links and revokes every session. The
   * link proves the mailbox, so an address not confirmed yet is confirmed now, and then everything
   * issued under the account before (revokeIssued: tokens, codes, device grants) is revoked too:
   * whoever chose the old password never showed they hold that mailbox (someone may have signed up
   * with another's address and made tokens before its owner took the account over). Answers the
   * account and what the caller tells every node to close.
   */
  async resetPassword(token: string, newPassword: string, now: number): Promise<Reset> {
    checkPassword(newPassword);
    const link = await this.consume(token, 'reset-password', now);
    const passwordHash = await this.passwords.hash(newPassword);
    let unproven = false;
    const reset = await modify(this.store.accounts, link.accountId, (account) => {
      // Mailed to an address the account has left since: whoever holds that mailbox is no longer its owner.
      if (account.email !== link.email)
        throw new AppError('INVALID_LINK_TOKEN', 'The link was sent to an address the account no longer uses.');
      unproven = !account.emailVerified;
      return { passwordHash, emailVerified: true };
    });
    if (!reset) throw new AppError('INVALID_LINK_TOKEN');
    const { accountId } = link;
    await voidResetLinks(this.store, accountId);
    if (unproven) {
      const { tokenIds } = await revokeIssued(this.store, accountId, now);
      return { accountId, notice: { kind: 'revoked', accountId, tokenIds } };
    }
    await this.store.sessions.deleteMany({ accountId });
    return { accountId, notice: { kind: 'revoked', accountSessions: accountId } };
  }

  /**
   * Confirms the address, in a session of the account the link was mailed for: the link proves the
   * mailbox and the session the password. Either alone is not enough. A link that anyone could
   * follow let someone who signed up with another's address (an operator's, say: OPERATOR_EMAILS
   * makes a confirmed one an operator) have it confirmed by its owner clicking an unasked-for mail,
   * and keep the password. A session of another account leaves the link unspent.
   */
  async verifyEmail(token: string, accountId: string, now: number): Promise<AccountRecord> {
    const mailed = await this.store.linkTokens.get(sha256(token));
    if (mailed && mailed.purpose === 'verify-email' && mailed.accountId !== accountId) throw signInAsOwner();
    const link = await this.consume(token, 'verify-email', now);
    if (link.accountId !== accountId) throw signInAsOwner();
    const verified = await modify(this.store.accounts, link.accountId, (account) => {
      if (account.email !== link.email)
        throw new AppError('INVALID_LINK_TOKEN', 'The link was sent to an address the account no longer uses.');
      return { emailVerified: true };
    });
    if (!verified) throw new AppError('INVALID_LINK_TOKEN');
    return verified;
  }

  private async issue(account: AccountRecord, purpose: Purpose, now: number): Promise<string> {
    const token = newSecret();
    const ttl = purpose === 'reset-password' ? RESET_TTL_MS : VERIFY_TTL_MS;
    await this.store.linkTokens.insert({
      _id: sha256(token),
      version: 1,
      accountId: account._id,
      purpose,
      email: account.email,
      createdAt: now,
      expiresAt: now + ttl,
    });
    return token;
  }

  /** Voids every reset link of the account but the newest (by creation, then id: concurrent callers agree on it). */
  private async keepNewestResetLink(accountId: string): Promise<void> {
    const links = await this.store.linkTokens.select({ accountId, purpose: 'reset-password' }, ['createdAt']);
    const newest = links.reduce((a, b) =>
      b.createdAt > a.createdAt || (b.createdAt === a.createdAt && b._id > a._id) ? b : a,
    );
    for (const link of links) if (link._id !== newest._id) await this.store.linkTokens.delete(link._id);
  }

  private async consume(token: string, purpose: Purpose, now: number): Promise<LinkTokenRecord> {
    const id = sha256(token);
    const link = await this.store.linkTokens.get(id);
    if (!link || link.purpose !== purpose) throw new AppError('INVALID_LINK_TOKEN');
    const mine = await this.store.linkTokens.delete(id, link.version);
    if (!mine) throw new AppError('INVALID_LINK_TOKEN');
    if (link.expiresAt <= now) throw new AppError('EXPIRED_TOKEN', 'The link has expired; ask for a new one.');
    return link;
  }
}
