// Operators and accounts (DOMAIN.md "Operators", people and access): finding an account, reading
// what it holds, and revoking its credentials. Every read goes through an index (email, id, owner,
// account, target); secrets and hashes never leave here (tokens as publicToken, no password hash).
import { publicToken, type PublicToken } from '../accounts/service-tokens.js';
import { closed, roleOn } from '../auth/project-selection.js';
import { AppError } from '../errors/app-error.js';
import { modify, type AccountRecord, type Store, type TokenRecord } from '../../store/ports/store.js';
import { accountsIn, auditView } from './audit-log.js';
import { namedAccounts, type NamedAccount } from './named-accounts.js';

/** Account ids are UUIDs (signup, anonymous boards); anything else names no account. */
const ACCOUNT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Sorts above every character an email holds: the end of a prefix's range. */
const PREFIX_END = '\u{10ffff}';
/** An account holds at most 500 tokens (revoked ones count), so one indexed read holds them all. */
const TOKENS_READ = 1000;
const AUDIT_ROWS = 20;
const BOARDS_READ = 500;

const iso = (ms: number | null | undefined): string | null => (ms == null ? null : new Date(ms).toISOString());

export interface UserRow {
  id: string;
  email: string;
  displayName: string | null;
  emailVerified: boolean;
  status: 'active' | 'deleted';
  /** Pro when any board the account owns is on Pro. */
  plan: 'free' | 'pro';
  boards: { owned: number; member: number };
  createdAt: string;
  lastSignInAt: string | null;
  deletedAt: string | null;
  deletedBy: 'owner' | 'operator' | null;
  purgeAfter: string | null;
}

export type AdminToken = PublicToken & { revoked: boolean };

export interface UserDetail {
  user: UserRow;
  /** Each board with its owner's address beside its name: boards of different accounts often share one ("My board"). */
  boards: {
    projectId: string;
    name: string;
    ownerId: string;
    ownerEmail: string | null;
    role: string;
    plan: 'free' | 'pro';
    owned: boolean;
    closed: boolean;
  }[];
  tokens: AdminToken[];
  billing: {
    projectId: string;
    status: string | null;
    interval: 'month' | 'year' | null;
    currentPeriodEnd: string | null;
    cancelAtPeriodEnd: boolean;
    pastDueSince: string | null;
  }[];
  /** Newest first: rows about the account (operator actions on it) and rows it wrote itself; the accounts they name. */
  audit: { about: AuditView[]; by: AuditView[]; accounts: Record<string, NamedAccount> };
}

export type AuditView = ReturnType<typeof auditView>;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export const adminToken = (t: TokenRecord): AdminToken => ({ ...publicToken(t), revoked: t.revoked });

/** A cursor is the last row's sort key, opaque to callers; anything else is INVALID_CURSOR. */
function encodeCursor(key: (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

function decodeCursor(cursor: string, shape: ('string' | 'number')[]): (string | number)[] {
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(key) && key.length === shape.length && key.every((k, i) => typeof k === shape[i]))
      return key as (string | number)[];
  } catch {
    // falls through to the refusal
  }
  throw new AppError('INVALID_CURSOR', 'Pass nextCursor exactly as the previous page gave it, or omit it.');
}

export class AccountsAdmin {
  constructor(private readonly store: Store) {}

  /** The account, or 404 NOT_FOUND (a malformed id names none). */
  async account(userId: string): Promise<AccountRecord> {
    const account = ACCOUNT_ID.test(userId) ? await this.store.accounts.get(userId) : null;
    if (!account) throw new AppError('NOT_FOUND', 'No account has that id.');
    return account;
  }

  /**
   * Accounts by id (exact) or email prefix (in email order, the email index's), or the deleted
   * ones (most recently deleted first, by the purge date's index); `status` narrows either.
   */
  async search(input: {
    q?: string;
    status?: 'active' | 'deleted';
    cursor?: string;
    limit: number;
  }): Promise<Page<UserRow>> {
    const q = input.q?.trim().toLowerCase();
    if (q === undefined && input.status !== 'deleted')
      throw new AppError('INVALID_INPUT', 'query: pass q (an email prefix or an account id), or status=deleted.', {
        field: 'query.q',
      });
    let found: AccountRecord[];
    let keyOf: (a: AccountRecord) => (string | number)[];
    if (q !== undefined && ACCOUNT_ID.test(q)) {
      // One account at most: there is no next page.
      const one = await this.store.accounts.get(q);
      found = one ? [one] : [];
      keyOf = (a) => [a.email];
    } else if (q !== undefined) {
      const after = input.cursor === undefined ? null : (decodeCursor(input.cursor, ['string'])[0] as string);
      if (after !== null && !after.startsWith(q))
        throw new AppError('INVALID_CURSOR', 'This cursor belongs to another search.');
      found = await this.store.accounts.find(
        { email: after === null ? { $gte: q, $lt: q + PREFIX_END } : { $gt: after, $lt: q + PREFIX_END } },
        { sort: [['email', 1]], limit: input.limit + 1 },
      );
      keyOf = (a) => [a.email];
    } else {
      const [before, id] =
        input.cursor === undefined
          ? [Number.MAX_SAFE_INTEGER, '']
          : (decodeCursor(input.cursor, ['number', 'string']) as [number, string]);
      found = await this.store.accounts.find(
        { purgeAfter: { $gte: 0, $lte: before } },
        {
          sort: [
            ['purgeAfter', -1],
            ['_id', -1],
          ],
          limit: input.limit + 1 + (id ? 50 : 0),
        },
      );
      // The cursor's own row and those before it at the same instant were on the previous page.
      if (id) found = found.filter((a) => a.purgeAfter! < before || a._id < id);
      keyOf = (a) => [a.purgeAfter!, a._id];
    }
    if (input.status === 'deleted') found = found.filter((a) => a.deletedAt != null);
    if (input.status === 'active') found = found.filter((a) => a.deletedAt == null);
    const page = found.slice(0, input.limit);
    return {
      items: await Promise.all(page.map((a) => this.row(a))),
      nextCursor: found.length > input.limit ? encodeCursor(keyOf(page.at(-1)!)) : null,
    };
  }

  /** One account's row, as the search answers it. */
  async user(userId: string): Promise<UserRow> {
    return this.row(await this.account(userId));
  }

  async detail(userId: string): Promise<UserDetail> {
    const account = await this.account(userId);
    const [memberships, owned, tokens, billing, about, by] = await Promise.all([
      this.store.members.find({ accountId: userId }, { limit: BOARDS_READ }),
      this.store.projects.find({ ownerId: userId }, { limit: BOARDS_READ }),
      this.accountTokens(userId),
      this.store.billing.find({ accountId: userId }, { limit: BOARDS_READ }),
      this.store.audit.find(
        { target: `account:${userId}` },
        {
          sort: [
            ['at', -1],
            ['_id', -1],
          ],
          limit: AUDIT_ROWS,
        },
      ),
      this.store.audit.find(
        { actor: `user:${userId}` },
        {
          sort: [
            ['at', -1],
            ['_id', -1],
          ],
          limit: AUDIT_ROWS,
        },
      ),
    ]);
    const projects = new Map(owned.map((p) => [p._id, p]));
    const missing = memberships.filter((m) => !projects.has(m.projectId));
    for (const p of await Promise.all(missing.map((m) => this.store.projects.get(m.projectId))))
      if (p) projects.set(p._id, p);
    const memberOf = new Map(memberships.map((m) => [m.projectId, m]));
    const owners = new Set([...projects.values()].map((p) => p.ownerId));
    const emails = new Map(
      (await this.store.accounts.select({ _id: { $in: [...owners] } }, ['email'])).map((a) => [a._id, a.email]),
    );
    const boards = [...projects.values()].flatMap((p) => {
      const role = roleOn(p, userId, memberOf.get(p._id) ?? null);
      if (!role) return [];
      const owner = { ownerId: p.ownerId, ownerEmail: emails.get(p.ownerId) ?? null };
      return [
        {
          projectId: p._id,
          name: p.name,
          ...owner,
          role,
          plan: p.plan,
          owned: p.ownerId === userId,
          closed: closed(p),
        },
      ];
    });
    const audit = { about: about.map(auditView), by: by.map(auditView) };
    return {
      user: await this.row(account),
      boards,
      tokens: tokens.map(adminToken),
      billing: billing.map((b) => ({
        projectId: b._id,
        status: b.status,
        interval: b.interval,
        currentPeriodEnd: iso(b.currentPeriodEnd),
        cancelAtPeriodEnd: b.cancelAtPeriodEnd,
        pastDueSince: iso(b.pastDueSince),
      })),
      audit: { ...audit, accounts: await namedAccounts(this.store, [...audit.about, ...audit.by].flatMap(accountsIn)) },
    };
  }

  /** The account's tokens, revoked ones too, newest first. */
  async tokens(userId: string, page: { cursor?: string; limit: number }): Promise<Page<AdminToken>> {
    await this.account(userId);
    const all = await this.accountTokens(userId);
    let start = 0;
    if (page.cursor !== undefined) {
      const [at, id] = decodeCursor(page.cursor, ['number', 'string']) as [number, string];
      start = all.findIndex((t) => t.createdAt < at || (t.createdAt === at && t._id < id));
      if (start < 0) start = all.length;
    }
    const items = all.slice(start, start + page.limit);
    const last = items.at(-1);
    return {
      items: items.map(adminToken),
      nextCursor: last && start + page.limit < all.length ? encodeCursor([last.createdAt, last._id]) : null,
    };
  }

  private async accountTokens(userId: string): Promise<TokenRecord[]> {
    const tokens = await this.store.tokens.find({ accountId: userId }, { limit: TOKENS_READ });
    return tokens.sort((a, b) => b.createdAt - a.createdAt || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0));
  }

  /** Revokes one token (idempotent: `already` when it was revoked before); 404 TOKEN_NOT_FOUND when none has that id. */
  async revokeToken(tokenId: string): Promise<{ token: AdminToken; accountId: string; already: boolean }> {
    const before = tokenId.length <= 64 ? await this.store.tokens.get(tokenId) : null;
    if (!before) throw new AppError('TOKEN_NOT_FOUND', 'No service token has that id.');
    const token = await modify(this.store.tokens, tokenId, (t) => (t.revoked ? null : { revoked: true }));
    if (!token) throw new AppError('TOKEN_NOT_FOUND', 'No service token has that id.');
    return { token: adminToken(token), accountId: token.accountId, already: before.revoked };
  }

  private async row(a: AccountRecord): Promise<UserRow> {
    const [owned, member, sessions] = await Promise.all([
      this.store.projects.select({ ownerId: a._id }, ['plan'], { limit: BOARDS_READ }),
      this.store.members.count({ accountId: a._id, role: { $in: ['admin', 'member', 'viewer'] } }),
      this.store.sessions.select({ accountId: a._id }, ['createdAt', 'impersonation']),
    ]);
    // A sign-in opens a session; an operator's impersonation is not the account signing in.
    const signIns = sessions.filter((s) => !s.impersonation).map((s) => s.createdAt);
    return {
      id: a._id,
      email: a.email,
      displayName: a.displayName,
      emailVerified: a.emailVerified,
      status: a.deletedAt != null ? 'deleted' : 'active',
      plan: owned.some((p) => p.plan === 'pro') ? 'pro' : 'free',
      boards: { owned: owned.length, member },
      createdAt: new Date(a.createdAt).toISOString(),
      lastSignInAt: signIns.length ? iso(Math.max(...signIns)) : null,
      deletedAt: iso(a.deletedAt),
      deletedBy: a.deletedBy ?? null,
      purgeAfter: iso(a.purgeAfter),
    };
  }
}
