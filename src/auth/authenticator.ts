// Resolves the credential a request carries into an Identity. Secrets are looked up by their
// sha256 only; a store that cannot answer fails the request closed (see the pipeline).
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import type { ReadsById, SessionRecord, Store, TokenRecord } from '../../store/ports/store.js';
import type { AuthKind } from './auth-kind.js';
import type { Identity, TokenIdentity } from './identity.js';
import { andThen, type Maybe } from '../../store/ports/maybe.js';

export const SESSION_COOKIE = 'board_session';
/**
 * While an operator acts as an account (src/admin/impersonation.ts), their own session waits in
 * this cookie, sent by the browser only under IMPERSONATION_PATH: the console is shut meanwhile,
 * and only the impersonation routes (its state, its end) are reached, as the operator.
 */
export const OPERATOR_SESSION_COOKIE = 'board_operator_session';
export const IMPERSONATION_PATH = '/api/admin/impersonation';
export const TOKEN_PREFIX = 'agb_';
const LAST_USE_RESOLUTION_MS = 60_000;

/** One-shot (Node 20.12+): a third of createHash's cost, paid on every request with a credential. */
export const sha256 = (value: string): string => hash('sha256', value, 'hex');

/** Two digests compared in constant time; digests of different lengths are simply unequal. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
export const newSecret = (bytes = 32): string => randomBytes(bytes).toString('base64url');

type AuthPorts = Pick<Store, 'sessions' | 'tokens' | 'accounts'>;

export interface AuthenticatorHooks {
  /**
   * An impersonation session was presented after its 30 minutes, not ended before: it ended by
   * itself, and this is when it is noticed (the audit row; src/admin/impersonation.ts). Awaited,
   * never failing the request (which is refused either way).
   */
  impersonationLapsed?(session: SessionRecord, now: number): Promise<void>;
  /**
   * An impersonation session was presented (a request, or a socket's credential checked again) and
   * its operator is gone (operatorPresent): it ended then, and this is when it is noticed (the audit
   * row; src/admin/impersonation.ts). Awaited, never failing the request (refused either way).
   */
  impersonationOrphaned?(session: SessionRecord, now: number): Promise<void>;
  /**
   * Whether the account is an operator now (OperatorGate.isOperator, which rejects when the store
   * cannot say): an impersonation session holds only while its operator still is one. Absent, the
   * operator's own session alone decides.
   */
  isOperator?(accountId: string): Promise<boolean>;
}

/** Where a request's credential is looked up: the store, or a cache in front of it (src/auth/identity-cache.ts). */
export interface CredentialReads {
  tokenBySecretHash(secretHash: string): Maybe<TokenRecord | null>;
  sessions: ReadsById<SessionRecord>;
}

export class Authenticator {
  private readonly reads: CredentialReads;

  constructor(
    private readonly store: AuthPorts,
    private readonly hooks: AuthenticatorHooks = {},
    reads?: CredentialReads,
  ) {
    this.reads = reads ?? {
      tokenBySecretHash: (secretHash) => store.tokens.findOne({ secretHash }),
      sessions: store.sessions,
    };
  }

  /**
   * Returns the identity the route needs, null where none is needed or present, or throws.
   * `anonymous` is the answer to no credential at all on a Bearer-or-session route: board
   * surfaces say AUTH_REQUIRED, account structure says UNAUTHENTICATED (contract Part 4).
   */
  authenticate(
    kind: AuthKind,
    headers: Record<string, string>,
    cookies: Record<string, string>,
    now: number,
    anonymous: 'AUTH_REQUIRED' | 'UNAUTHENTICATED' = 'AUTH_REQUIRED',
  ): Maybe<Identity | null> {
    if (kind === 'none') return null;
    const bearer = kind === 'bearer-or-session' ? bearerOf(headers['authorization']) : null;
    if (bearer !== null) return this.fromToken(bearer, now);
    const cookie = cookies[SESSION_COOKIE];
    if (!cookie) {
      if (kind === 'session-optional') return null;
      throw new AppError(kind === 'bearer-or-session' ? anonymous : 'UNAUTHENTICATED');
    }
    return andThen(this.fromSession(cookie, now), (session) => {
      if (session || kind === 'session-optional') return session;
      throw new AppError('UNAUTHENTICATED');
    });
  }

  /** Whether the credential behind an identity still stands (a socket outlives the request that opened it); read from the store itself. */
  async stillValid(identity: Identity, now: number): Promise<boolean> {
    if (identity.kind === 'session') {
      const session = await this.store.sessions.get(identity.sessionId);
      if (session && !session.revoked && session.expiresAt <= now) await this.lapsed(session, now);
      if (session === null || session.revoked || session.expiresAt <= now) return false;
      if (!session.impersonation || (await this.operatorPresent(session.impersonation, this.store.sessions, now)))
        return true;
      await this.orphaned(session, now);
      return false;
    }
    return tokenStands(await this.store.tokens.get(identity.tokenId), identity, now);
  }

  private fromSession(cookie: string, now: number): Maybe<Identity | null> {
    return andThen(this.reads.sessions.get(sha256(cookie)), (session) => {
      if (!session || session.revoked) return null;
      if (session.expiresAt <= now) return this.lapsed(session, now).then(() => null);
      if (!session.impersonation) return sessionIdentity(session);
      return andThen(this.operatorPresent(session.impersonation, this.reads.sessions, now), (present) =>
        present ? sessionIdentity(session) : this.orphaned(session, now).then(() => null),
      );
    });
  }

  /**
   * Whether the operator behind an impersonation session is still there: acting as an account needs
   * the operator signed in (src/admin/impersonation.ts), so the session holds only while the
   * operator's own session stands (not deleted by a sign-out or a revoke, not revoked, not expired)
   * and the operator is still one. The operator's session is read through `sessions` each time (on
   * requests the identity cache, whose entry of it goes on every node when it is written), never
   * kept with the impersonation session's identity.
   */
  private operatorPresent(
    imp: NonNullable<SessionRecord['impersonation']>,
    sessions: ReadsById<SessionRecord>,
    now: number,
  ): Maybe<boolean> {
    return andThen(sessions.get(imp.operatorSessionId), (own) => {
      if (!operatorSignedIn(imp, own, now)) return false;
      return this.hooks.isOperator?.(imp.operatorId) ?? true;
    });
  }

  private async lapsed(session: SessionRecord, now: number): Promise<void> {
    if (session.impersonation && this.hooks.impersonationLapsed)
      await this.hooks.impersonationLapsed(session, now).catch(() => undefined);
  }

  private async orphaned(session: SessionRecord, now: number): Promise<void> {
    if (this.hooks.impersonationOrphaned) await this.hooks.impersonationOrphaned(session, now).catch(() => undefined);
  }

  private fromToken(secret: string, now: number): Maybe<Identity> {
    if (!secret.startsWith(TOKEN_PREFIX)) throw new AppError('INVALID_SERVICE_TOKEN');
    return andThen(this.reads.tokenBySecretHash(sha256(secret)), (token) => {
      if (!token || token.revoked) throw new AppError('INVALID_SERVICE_TOKEN');
      if (token.expiresAt !== null && token.expiresAt <= now) throw new AppError('EXPIRED_TOKEN');
      if (token.lastUsedAt === null || now - token.lastUsedAt >= LAST_USE_RESOLUTION_MS) {
        // Off the request path and at most once a minute per token: a lost race only loses a timestamp.
        this.store.tokens.update(token._id, token.version, { lastUsedAt: now }).catch(() => undefined);
      }
      return tokenIdentity(token);
    });
  }
}

/** Whether an impersonation's operator is signed in: their own session (`own`) there, not revoked, not expired. */
export const operatorSignedIn = (
  imp: NonNullable<SessionRecord['impersonation']>,
  own: SessionRecord | null,
  now: number,
): boolean => own !== null && !own.revoked && own.expiresAt > now && own.accountId === imp.operatorId;

/**
 * Whether the token behind a token identity still stands at `now`: not revoked, not expired, and
 * not reissued since (a reissued token keeps its id but not its secret, whose prefix is in the identity).
 */
export const tokenStands = (token: TokenRecord | null, identity: TokenIdentity, now: number): token is TokenRecord =>
  token !== null &&
  !token.revoked &&
  (token.expiresAt === null || token.expiresAt > now) &&
  token.prefix === identity.prefix;

/**
 * Identities as made from a record, kept while the record is: the identity cache hands out the same
 * record until it changes, so a credential's requests share one identity (which nobody changes) and
 * what is worked out per identity downstream (src/auth/project-selection.ts) is found again.
 */
const identities = new WeakMap<TokenRecord | SessionRecord, Identity>();

/** The identity kept for `record`, made by `make` the first time. */
function kept<I extends Identity>(record: TokenRecord | SessionRecord, make: () => I): I {
  let identity = identities.get(record) as I | undefined;
  if (!identity) identities.set(record, (identity = make()));
  return identity;
}

/** Who a service token acts as. */
export const tokenIdentity = (token: TokenRecord): TokenIdentity =>
  kept(token, () => ({
    kind: 'token',
    principal: `agent:${token.agentId}`,
    accountId: token.accountId,
    tokenId: token._id,
    agentId: token.agentId,
    scope: token.scope,
    prefix: token.prefix,
    boardId: token.boardId,
    role: token.role,
    resources: token.resources,
  }));

/** Who a session acts as (an operator acting as its account included). */
const sessionIdentity = (session: SessionRecord): Identity =>
  kept(session, () => {
    const identity: Identity = {
      kind: 'session',
      principal: `user:${session.accountId}`,
      accountId: session.accountId,
      sessionId: session._id,
    };
    if (session.impersonation)
      identity.impersonation = {
        operatorId: session.impersonation.operatorId,
        operatorSessionId: session.impersonation.operatorSessionId,
      };
    return identity;
  });

/** "Bearer x" gives x; a malformed Authorization header gives "" (an invalid token). */
function bearerOf(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : '';
}
