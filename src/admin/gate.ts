// The operator gate (DOMAIN.md "Operators"): /api/admin and /admin answer only an operator's own
// session, an account named in OPERATOR_EMAILS whose address is confirmed (isOperatorAccount, the
// one rule the sockets ask too). Everyone else, a token included (even an operator's), a session
// of another account, no credential, or a credential the store cannot check now, gets exactly what
// an unknown path gets: 404 NOT_FOUND with the same body, whatever the method (src/http/uws/routes.ts
// names no operator route in a 405's Allow). The gate runs before the body or query is parsed, so
// a malformed one tells nothing either.
//
// An impersonation session is never an operator's own, even of an operator's account: while an
// operator acts as an account the console is shut to that browser. Their own session then waits
// in OPERATOR_SESSION_COOKIE, which the browser sends only to the impersonation routes (its state
// and its end, src/admin/impersonation.ts); the gate admits that cookie as the operator's session
// too (it is one: whoever holds it is that operator anyway).
import type { AccountRecord, Store } from '../../store/ports/store.js';
import { OPERATOR_SESSION_COOKIE, SESSION_COOKIE, type Authenticator } from '../auth/authenticator.js';
import type { SessionIdentity } from '../auth/identity.js';
import { AppError } from '../errors/app-error.js';
import { orElse } from '../../store/ports/maybe.js';

/**
 * Whether an account is an operator: its address is listed and confirmed. The one place this is
 * decided: a stranger who signs up with a listed address first, or an address set by change-email,
 * is unconfirmed until the link mailed to it is followed, and no operator until then.
 */
export function isOperatorAccount(
  account: Pick<AccountRecord, 'email' | 'emailVerified'> | null,
  operatorEmails: ReadonlySet<string>,
): boolean {
  return account !== null && account.emailVerified && operatorEmails.has(account.email);
}

export class OperatorGate {
  private readonly emails: ReadonlySet<string>;

  constructor(
    private readonly authenticator: Pick<Authenticator, 'authenticate'>,
    private readonly store: Pick<Store, 'accounts'>,
    operatorEmails: readonly string[],
  ) {
    this.emails = new Set(operatorEmails);
  }

  /** Whether any operator is configured (without one, the gate refuses everyone). */
  get configured(): boolean {
    return this.emails.size > 0;
  }

  /** The operator's session identity, or 404 NOT_FOUND as for an unknown path. */
  async admit(headers: Record<string, string>, cookies: Record<string, string>, now: number): Promise<SessionIdentity> {
    if (this.emails.size && headers['authorization'] === undefined) {
      for (const cookie of [cookies[SESSION_COOKIE], cookies[OPERATOR_SESSION_COOKIE]]) {
        if (cookie === undefined) continue;
        const identity = await orElse(
          () => this.authenticator.authenticate('session', headers, { [SESSION_COOKIE]: cookie }, now),
          null,
        );
        // A store that cannot say now shuts the gate as a stranger finds it.
        const operator =
          identity?.kind === 'session' &&
          !identity.impersonation &&
          (await orElse(() => this.isOperator(identity.accountId), false));
        if (operator) return identity;
      }
    }
    throw new AppError('NOT_FOUND');
  }

  /**
   * Whether the account is an operator now (isOperatorAccount). The list is read at start; the
   * account is read from the store on every call, never a cache: its address or its confirmation
   * may have changed a moment ago. A store that cannot answer throws rather than saying no: what
   * ends an operator's socket or an impersonation must be sure (a store hiccup ends nothing), and
   * the gate (admit) fails closed on it itself.
   */
  async isOperator(accountId: string): Promise<boolean> {
    return isOperatorAccount(await this.store.accounts.get(accountId), this.emails);
  }
}
