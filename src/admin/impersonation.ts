// Operators acting as an account (DOMAIN.md "Operators"): an impersonation session is a session of
// the account of its own, marked with the operator, their session and the reason, and ending after
// 30 minutes. The browser holds it in the ordinary session cookie, so every page and call acts as
// the account; the pipeline marks each response (X-Impersonated-By) and originOf each audit row
// (impersonatedBy). The operator's own session is kept meanwhile in OPERATOR_SESSION_COOKIE, sent
// by the browser only under IMPERSONATION_PATH: the console is shut until the impersonation ends,
// and the end route (reached through that cookie, src/admin/gate.ts) puts it back.
//
// It holds only while the operator does: their own session standing (not signed out, revoked or
// expired) and they still an operator (src/auth/authenticator.ts, `operatorPresent`; a revoked
// operator session's notice closes its sockets too, src/ws/access-changes.ts).
//
// It ends explicitly (POST /api/admin/impersonation/end: the session revoked, its sockets closed),
// by itself at 30 minutes, or with its operator (their own session gone, or they no longer an
// operator); the last two are written down when noticed: the session presented again (a request or
// a socket's credential checked again, src/auth/authenticator.ts; a socket closed by the notice
// about its operator's session is checked so, src/ws/access-changes.ts), or the end route called
// after it. Every end writes the one `admin.impersonation.end` row of that session (a key of its
// own, so never twice, whichever node notices first).
//
// Whatever outlives the session or changes who can act or pay is refused while an operator acts
// as the account (IMPERSONATION_FORBIDDEN, DOMAIN.md "Operators"): each such route says so
// (`refusedWhileImpersonating`, checked by the pipeline), never its handler.
import {
  DuplicateKeyError,
  modify,
  type AccountRecord,
  type SessionRecord,
  type Store,
} from '../../store/ports/store.js';
import { newSecret, OPERATOR_SESSION_COOKIE, operatorSignedIn, SESSION_COOKIE, sha256 } from '../auth/authenticator.js';
import type { SessionIdentity } from '../auth/identity.js';
import { auditRow } from '../audit-row.js';
import type { RevokedNotice } from '../auth/access-notices.js';
import { AppError } from '../errors/app-error.js';
import type { RequestContext } from '../request-context.js';
import { operatorAuditRow } from './audit.js';

export const IMPERSONATION_MS = 30 * 60_000;

type Ports = Pick<Store, 'accounts' | 'sessions' | 'audit'>;
type Ctx = Pick<RequestContext, 'identity' | 'requestId' | 'remoteAddress' | 'now' | 'cookies'>;

/** The one end row of an impersonation session: its key is derived from the session, so either end writes it once. */
const endRowId = (sessionId: string): string => `impersonation-end:${sha256(`end:${sessionId}`).slice(0, 40)}`;

/**
 * The impersonation session ended by itself (its 30 minutes are over) and is noticed now: its end
 * row (automatic), then the session marked revoked so it is not noticed again. Idempotent.
 */
export async function noticeLapsed(
  store: Pick<Store, 'sessions' | 'audit'>,
  session: SessionRecord,
  now: number,
  ctx?: Ctx,
): Promise<void> {
  if (session.impersonation) await noticeEnded(store, session, now, { endedAt: session.expiresAt }, ctx);
}

/**
 * The impersonation session's operator is gone, noticed now (Authenticator.operatorPresent said so,
 * maybe through a cache): asked again of the store itself, their own session not signed in, or
 * they no longer an operator (`isOperator`, which throws when the store cannot say: a failed read
 * ends nothing), it ended. Its end row (automatic, with the cause), then the session marked revoked
 * so it is not noticed again. Idempotent.
 */
export async function noticeOperatorGone(
  store: Pick<Store, 'sessions' | 'audit'>,
  session: SessionRecord,
  now: number,
  isOperator: (accountId: string) => Promise<boolean>,
): Promise<void> {
  const imp = session.impersonation;
  if (!imp || session.revoked) return;
  const signedIn = operatorSignedIn(imp, await store.sessions.get(imp.operatorSessionId), now);
  if (signedIn && (await isOperator(imp.operatorId))) return;
  const cause = signedIn ? 'operator-role-lost' : 'operator-session-ended';
  await noticeEnded(store, session, now, { endedAt: now, cause });
}

/** An end not asked for (lapsed, or its operator gone): the session's one end row, then the session revoked. */
async function noticeEnded(
  store: Pick<Store, 'sessions' | 'audit'>,
  session: SessionRecord,
  now: number,
  how: { endedAt: number; cause?: string },
  ctx?: Ctx,
): Promise<void> {
  const imp = session.impersonation!;
  const row = auditRow({
    id: endRowId(session._id),
    at: now,
    actor: `user:${imp.operatorId}`,
    action: 'admin.impersonation.end',
    projectId: null,
    origin: ctx ? { requestId: ctx.requestId, address: ctx.remoteAddress } : null,
    data: { automatic: true, ...how, startedAt: session.createdAt, reason: imp.reason, operator: true },
  });
  await insertOnce(store, { ...row, target: `account:${session.accountId}` });
  await modify(store.sessions, session._id, (current) => (current.revoked ? null : { revoked: true }));
}

async function insertOnce(store: Pick<Store, 'audit'>, row: Parameters<Store['audit']['insert']>[0]): Promise<boolean> {
  try {
    await store.audit.insert(row);
    return true;
  } catch (e) {
    if (e instanceof DuplicateKeyError) return false;
    throw e;
  }
}

export interface Started {
  account: AccountRecord;
  /** The impersonation session's secret (the session cookie's new value) and id. */
  secret: string;
  sessionId: string;
  expiresAt: number;
  /** The operator's own session, kept in OPERATOR_SESSION_COOKIE until the end. */
  operator: { secret: string; sessionId: string; expiresAt: number };
}

export interface Ended {
  /** Whether this call ended a live impersonation session (false: none, or it had ended already). */
  ended: boolean;
  /** The account that was acted as, when an impersonation session was presented. */
  accountId: string | null;
  operator: { secret: string; sessionId: string; expiresAt: number };
}

export interface State {
  impersonating: {
    accountId: string;
    email: string | null;
    reason: string;
    startedAt: number;
    expiresAt: number;
  } | null;
  operator: { sessionId: string };
}

export class Impersonation {
  constructor(
    private readonly store: Ports,
    private readonly revoke: (notice: RevokedNotice) => void,
  ) {}

  /** Opens an impersonation session of `userId` for the operator of `ctx` (admitted by the gate). */
  async start(ctx: Ctx, userId: string, reason: string): Promise<Started> {
    const operator = operatorOf(ctx);
    const account = await this.store.accounts.get(userId);
    if (!account) throw new AppError('NOT_FOUND', 'No account has that id.');
    if (account._id === operator.accountId)
      throw new AppError('INVALID_INPUT', 'That is your own account; you act as it already.');
    if (account.deletedAt) throw new AppError('NOT_FOUND', 'The account is deleted; restore it before acting as it.');
    const own = await this.ownSession(ctx, operator);
    // One at a time: an impersonation this browser still holds ends here (a browser cannot get
    // here holding one, a client sending both cookies can).
    await this.endPresented(ctx, operator);
    const secret = newSecret();
    const sessionId = sha256(secret);
    // Never past the operator's own session: acting as an account needs the operator signed in.
    const expiresAt = Math.min(ctx.now + IMPERSONATION_MS, own.expiresAt);
    await this.store.sessions.insert({
      _id: sessionId,
      version: 1,
      accountId: account._id,
      createdAt: ctx.now,
      expiresAt,
      revoked: false,
      impersonation: { operatorId: operator.accountId, operatorSessionId: operator.sessionId, reason },
    });
    await this.store.audit.insert(
      operatorAuditRow(ctx, { action: 'impersonate', target: `account:${account._id}`, reason, data: { expiresAt } }),
    );
    return { account, secret, sessionId, expiresAt, operator: { ...own, sessionId: operator.sessionId } };
  }

  /** Ends the impersonation session the browser holds (if it is this operator's) and gives the operator their session back. */
  async end(ctx: Ctx): Promise<Ended> {
    const operator = operatorOf(ctx);
    const own = await this.ownSession(ctx, operator);
    return { ...(await this.endPresented(ctx, operator)), operator: { ...own, sessionId: operator.sessionId } };
  }

  private async endPresented(ctx: Ctx, operator: SessionIdentity): Promise<Pick<Ended, 'ended' | 'accountId'>> {
    const session = await this.presented(ctx, operator);
    if (!session) return { ended: false, accountId: null };
    if (session.revoked) return { ended: false, accountId: session.accountId };
    if (session.expiresAt <= ctx.now) {
      await noticeLapsed(this.store, session, ctx.now, ctx);
      return { ended: false, accountId: session.accountId };
    }
    let endedHere = false;
    await modify(this.store.sessions, session._id, (current) => {
      if (current.revoked) return null;
      endedHere = true;
      return { revoked: true };
    });
    if (endedHere) {
      const row = operatorAuditRow(ctx, {
        action: 'impersonation.end',
        target: `account:${session.accountId}`,
        data: { automatic: false, startedAt: session.createdAt, startReason: session.impersonation!.reason },
      });
      await insertOnce(this.store, { ...row, _id: endRowId(session._id) });
      this.revoke({ kind: 'revoked', sessionId: session._id });
    }
    return { ended: endedHere, accountId: session.accountId };
  }

  /** Whether the browser holds a live impersonation session of this operator, and of whom. */
  async state(ctx: Ctx): Promise<State> {
    const operator = operatorOf(ctx);
    const session = await this.presented(ctx, operator);
    const live = session && !session.revoked && session.expiresAt > ctx.now ? session : null;
    if (!live) return { impersonating: null, operator: { sessionId: operator.sessionId } };
    const account = await this.store.accounts.get(live.accountId);
    return {
      impersonating: {
        accountId: live.accountId,
        email: account?.email ?? null,
        reason: live.impersonation!.reason,
        startedAt: live.createdAt,
        expiresAt: live.expiresAt,
      },
      operator: { sessionId: operator.sessionId },
    };
  }

  /** The operator's own session: its secret (from whichever cookie the gate admitted) and expiry. */
  private async ownSession(ctx: Ctx, operator: SessionIdentity): Promise<{ secret: string; expiresAt: number }> {
    const secret = [ctx.cookies[SESSION_COOKIE], ctx.cookies[OPERATOR_SESSION_COOKIE]].find(
      (c) => c !== undefined && sha256(c) === operator.sessionId,
    );
    const record = await this.store.sessions.get(operator.sessionId);
    // The gate admitted this session from one of the two cookies a moment ago.
    if (secret === undefined || !record) throw new AppError('NOT_FOUND');
    return { secret, expiresAt: record.expiresAt };
  }

  /** The impersonation session in the session cookie, when it is one this operator's session opened. */
  private async presented(ctx: Ctx, operator: SessionIdentity): Promise<SessionRecord | null> {
    const cookie = ctx.cookies[SESSION_COOKIE];
    if (cookie === undefined) return null;
    const id = sha256(cookie);
    if (id === operator.sessionId) return null;
    const session = await this.store.sessions.get(id);
    return session?.impersonation?.operatorSessionId === operator.sessionId ? session : null;
  }
}

function operatorOf(ctx: Ctx): SessionIdentity {
  const identity = ctx.identity;
  if (identity?.kind !== 'session' || identity.impersonation) throw new AppError('NOT_FOUND');
  return identity;
}
