// Account and session rules shared by the account routes: signup with referral and default
// project, login, sessions. Store failures surface as StoreUnavailableError (fail closed).
import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import { newSecret, sha256, SESSION_COOKIE } from '../auth/authenticator.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { RateLimiter, WindowSpec } from '../ratelimit/limiter.js';
import type { SetCookie } from '../request-context.js';
import {
  DuplicateKeyError,
  modify,
  StoreUnavailableError,
  type AccountRecord,
  type Store,
} from '../../store/ports/store.js';
import { deleteProject, provisionProject } from './projects.js';
import { voidResetLinks } from './credentials.js';

export const SESSION_TTL_SECONDS = 30 * 24 * 3600;
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 128;
const REFERRAL_ALPHABET = '0123456789bcdfghjkmnpqrstvwxyz';
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const canonicalEmail = (email: string): string => email.trim().toLowerCase();

export function checkEmail(email: string): string {
  const canonical = canonicalEmail(email);
  if (canonical.length > 254 || !EMAIL.test(canonical))
    throw new AppError('INVALID_EMAIL', 'The email address is not valid.');
  return canonical;
}

export function checkPassword(password: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX)
    throw new AppError('INVALID_PASSWORD', `The password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`);
}

export function publicAccount(a: AccountRecord) {
  return {
    id: a._id,
    email: a.email,
    displayName: a.displayName,
    emailVerified: a.emailVerified,
    defaultProjectId: a.defaultProjectId,
    createdAt: new Date(a.createdAt).toISOString(),
  };
}

/**
 * Wrong passwords an email address may be given in 15 minutes, from any client address: the
 * per-address budget alone let a guesser spread over many addresses (an IPv6 /64 each) try one
 * account without end. Each sign-in takes one before the password is checked (so concurrent
 * guesses cannot pass together) and a right one gives it back; an address with no account counts
 * alike (a refusal says nothing of either). The budget is the current password's: a reset or a
 * change of password starts a new one, so its owner is let in again at once.
 */
export const SIGN_INS_PER_QUARTER_HOUR = 20;
const signInBudget = (email: string, account: AccountRecord | null): WindowSpec => ({
  key: `sign-in:${email.slice(0, 320)}:${account ? sha256(account.passwordHash).slice(0, 16) : '-'}`,
  limit: SIGN_INS_PER_QUARTER_HOUR,
  windowMs: 15 * 60_000,
});

/** Said only to whoever knows the password: a deleted account is kept 30 days for a restore. */
function refuseDeleted(account: AccountRecord): void {
  if (account.deletedAt != null)
    throw new AppError(
      'ACCOUNT_DELETED',
      `This account was deleted; an operator can restore it until ${new Date(account.purgeAfter || account.deletedAt).toISOString()}.`,
    );
}

export const newReferralCode = (): string =>
  [...randomBytes(12)].map((b) => REFERRAL_ALPHABET[b % REFERRAL_ALPHABET.length]).join('');

export interface OpenedSession {
  account: AccountRecord;
  cookie: SetCookie;
  csrfToken: string;
}

export class AccountService {
  constructor(
    private readonly store: Store,
    private readonly passwords: PasswordHasher,
    /** The CSRF token of a session id (src/auth/csrf.ts). */
    private readonly csrfToken: (sessionId: string) => string,
    /** Where sign-ins per email address are counted (the nodes' shared budgets). */
    private readonly limiter: RateLimiter,
  ) {}

  /** Resolves the referral before anything is written; creates account, default project and session. */
  async signup(input: { email: string; password: string; referralCode?: string }, now: number): Promise<OpenedSession> {
    const email = checkEmail(input.email);
    checkPassword(input.password);
    const referrer = input.referralCode ? await this.resolveReferral(input.referralCode) : null;
    if (input.referralCode && !referrer)
      throw new AppError('REFERRAL_CODE_INVALID', 'No account has that referral code; no account was created.');
    const account: AccountRecord = {
      _id: randomUUID(),
      version: 1,
      email,
      passwordHash: await this.passwords.hash(input.password),
      displayName: null,
      defaultProjectId: null,
      emailVerified: false,
      referralCode: newReferralCode(),
      referredBy: referrer?._id ?? null,
      referralMonths: referrer ? 1 : 0,
      createdAt: now,
    };
    try {
      await this.store.accounts.insert(account);
    } catch (e) {
      if (e instanceof DuplicateKeyError && e.index === 'email') throw new AppError('EMAIL_TAKEN');
      throw e;
    }
    try {
      const project = await provisionProject(this.store, account._id, 'My board', now);
      const starred = await this.store.accounts.update(account._id, account.version, { defaultProjectId: project._id });
      if (starred) Object.assign(account, starred);
      if (referrer) await this.grantReferralMonth(referrer._id);
    } catch (e) {
      await this.store.accounts.delete(account._id).catch(() => undefined);
      throw e;
    }
    return { account, ...(await this.openSession(account._id, now)) };
  }

  async login(input: { email: string; password: string }, now: number): Promise<OpenedSession> {
    const email = canonicalEmail(input.email);
    const account = await this.store.accounts.findOne({ email });
    const spec = signInBudget(email, account);
    const budget = await this.limiter.consume(spec, now);
    if (!budget.allowed) {
      const retryAfter = Math.max(1, budget.resetAt - Math.floor(now / 1000));
      throw new AppError(
        'RATE_LIMITED',
        `${SIGN_INS_PER_QUARTER_HOUR} wrong passwords for this email address within 15 minutes: retry in ${retryAfter} s, or reset the password (which lets you in at once).`,
        { limit: budget.limit, resetAt: budget.resetAt },
        { 'Retry-After': String(retryAfter) },
      );
    }
    const ok = await this.passwords.verify(input.password, account?.passwordHash ?? null);
    if (!account || !ok) throw new AppError('INVALID_CREDENTIALS');
    await this.limiter.refund(spec, now);
    refuseDeleted(account);
    const upgraded = await this.upgradeHash(account, input.password);
    const session = await this.openSession(account._id, now);
    // A deletion that landed meanwhile revoked the sessions it found, perhaps before this one: read again, and undo it.
    const after = await this.store.accounts.get(account._id);
    if (!after || after.deletedAt != null) {
      await this.store.sessions.delete(sha256(session.cookie.value));
      refuseDeleted(after ?? { ...account, deletedAt: now });
    }
    return { account: upgraded, ...session };
  }

  /** Replaces a hash of an older scheme now that the password is known; a concurrent change wins. */
  private async upgradeHash(account: AccountRecord, password: string): Promise<AccountRecord> {
    if (!this.passwords.outdated(account.passwordHash)) return account;
    return (
      (await this.store.accounts.update(account._id, account.version, {
        passwordHash: await this.passwords.hash(password),
      })) ?? account
    );
  }

  /** The referring account; a ledger that cannot answer is REFERRAL_UNAVAILABLE, and nothing is created. */
  private async resolveReferral(code: string): Promise<AccountRecord | null> {
    try {
      return await this.store.accounts.findOne({ referralCode: code });
    } catch (e) {
      if (e instanceof StoreUnavailableError)
        throw new AppError('REFERRAL_UNAVAILABLE', undefined, undefined, undefined, e);
      throw e;
    }
  }

  /**
   * Re-authenticates, stores the new hash, voids every reset link, revokes every session of the
   * account, opens a fresh one.
   */
  async changePassword(
    accountId: string,
    input: { currentPassword: string; newPassword: string },
    now: number,
  ): Promise<OpenedSession> {
    const account = await this.reauthenticate(accountId, input.currentPassword);
    checkPassword(input.newPassword);
    const updated = await this.store.accounts.update(account._id, account.version, {
      passwordHash: await this.passwords.hash(input.newPassword),
    });
    if (!updated)
      throw new AppError('INVALID_CURRENT_PASSWORD', 'The account changed meanwhile; re-authenticate and retry.');
    await voidResetLinks(this.store, accountId);
    await this.store.sessions.deleteMany({ accountId });
    return { account: updated, ...(await this.openSession(accountId, now)) };
  }

  /**
   * Re-authenticates, moves the account to the new address (unverified), voids every reset link,
   * revokes every session, opens a fresh one.
   */
  async changeEmail(
    accountId: string,
    input: { currentPassword: string; newEmail: string },
    now: number,
  ): Promise<OpenedSession> {
    const account = await this.reauthenticate(accountId, input.currentPassword);
    const email = checkEmail(input.newEmail);
    let updated: AccountRecord | null;
    try {
      updated = await this.store.accounts.update(account._id, account.version, {
        email,
        emailVerified: email === account.email && account.emailVerified,
      });
    } catch (e) {
      if (e instanceof DuplicateKeyError && e.index === 'email') throw new AppError('EMAIL_TAKEN');
      throw e;
    }
    if (!updated)
      throw new AppError('INVALID_CURRENT_PASSWORD', 'The account changed meanwhile; re-authenticate and retry.');
    await voidResetLinks(this.store, accountId);
    await this.store.sessions.deleteMany({ accountId });
    return { account: updated, ...(await this.openSession(accountId, now)) };
  }

  /**
   * The owner's own deletion: confirms it (the exact email, the current password), then runs
   * `remove`, the deletion itself (src/admin/deletion.ts: kept 30 days, then purged). Nothing is
   * changed when the confirmation fails.
   */
  async deleteAccount<R>(
    accountId: string,
    input: { confirmEmail: string; currentPassword: string },
    remove: () => Promise<R>,
  ): Promise<R> {
    const account = await this.store.accounts.get(accountId);
    if (!account) throw new AppError('UNAUTHENTICATED');
    if (input.confirmEmail !== account.email) throw new AppError('ACCOUNT_DELETE_CONFIRM_MISMATCH');
    await this.reauthenticate(accountId, input.currentPassword);
    return remove();
  }

  private async reauthenticate(accountId: string, currentPassword: string): Promise<AccountRecord> {
    const account = await this.store.accounts.get(accountId);
    if (!account) throw new AppError('UNAUTHENTICATED');
    if (!(await this.passwords.verify(currentPassword, account.passwordHash)))
      throw new AppError('INVALID_CURRENT_PASSWORD');
    return account;
  }

  /** A new session: its cookie, and the CSRF token its page sends back. */
  async openSession(accountId: string, now: number): Promise<Omit<OpenedSession, 'account'>> {
    const secret = newSecret();
    const sessionId = sha256(secret);
    await this.store.sessions.insert({
      _id: sessionId,
      version: 1,
      accountId,
      createdAt: now,
      expiresAt: now + SESSION_TTL_SECONDS * 1000,
      revoked: false,
    });
    return {
      cookie: { name: SESSION_COOKIE, value: secret, maxAge: SESSION_TTL_SECONDS },
      csrfToken: this.csrfToken(sessionId),
    };
  }

  /** Idempotent: a missing or dead session is already revoked. */
  async revokeSession(sessionId: string): Promise<void> {
    await this.store.sessions.delete(sessionId);
  }

  private async grantReferralMonth(accountId: string): Promise<void> {
    await modify(this.store.accounts, accountId, (current) => ({ referralMonths: current.referralMonths + 1 }));
  }
}

/**
 * Deletes an account outright: the boards it owns, its memberships, tokens, sessions and links.
 * Answers the deleted boards' ids (their sockets are the caller's to close). Checks nothing:
 * the purge of a deleted account (src/admin/deletion.ts) confirms first or waits its 30 days, the
 * anonymous-account sweep decides by age.
 *
 * Tokens on a board a person now owns while this account still holds its owner's membership (an
 * anonymous board whose claim has not moved them yet, src/accounts/claim-board.ts) are the
 * board's agents: they are left for the claim to move, never deleted with the account.
 */
export async function purgeAccount(store: Store, accountId: string): Promise<string[]> {
  const owned = await store.projects.find({ ownerId: accountId });
  for (const project of owned) await deleteProject(store, project._id);
  // Its owned boards' memberships went with them: an owner's membership left is on a board handed over.
  const handedOver = new Set((await store.members.find({ accountId, role: 'owner' })).map((m) => m.projectId));
  await store.members.deleteMany({ accountId });
  if (handedOver.size === 0) await store.tokens.deleteMany({ accountId });
  else
    for (const token of await store.tokens.select({ accountId }, ['boardId']))
      if (token.boardId === null || !handedOver.has(token.boardId)) await store.tokens.delete(token._id);
  await store.linkTokens.deleteMany({ accountId });
  await store.sessions.deleteMany({ accountId });
  await store.accounts.delete(accountId);
  return owned.map((p) => p._id);
}

export const clearSessionCookie: SetCookie = { name: SESSION_COOKIE, value: '', maxAge: 0 };
