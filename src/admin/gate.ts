// The operator gate (DOMAIN.md "Operators"): /api/admin and /admin answer only an operator's own
// session, an account named in OPERATOR_EMAILS. Everyone else, a token included (even an
// operator's), a session of another account, no credential, or a credential the store cannot
// check now, gets exactly what an unknown path gets: 404 NOT_FOUND with the same body. The gate
// runs before the body or query is parsed, so a malformed one tells nothing either.
//
// An impersonation session is never an operator's own, even of an operator's account: while an
// operator acts as an account the console is shut to that browser. Their own session then waits
// in OPERATOR_SESSION_COOKIE, which the browser sends only to the impersonation routes (its state
// and its end, src/admin/impersonation.ts); the gate admits that cookie as the operator's session
// too (it is one: whoever holds it is that operator anyway).
import type { Store } from '../../store/ports/store.js';
import { OPERATOR_SESSION_COOKIE, SESSION_COOKIE, type Authenticator } from '../auth/authenticator.js';
import type { SessionIdentity } from '../auth/identity.js';
import { AppError } from '../errors/app-error.js';
import { orElse } from '../../store/ports/maybe.js';

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
        const identity = await orElse(() => this.authenticator.authenticate('session', headers, { [SESSION_COOKIE]: cookie }, now), null);
        if (identity?.kind === 'session' && !identity.impersonation && (await this.isOperator(identity.accountId))) return identity;
      }
    }
    throw new AppError('NOT_FOUND');
  }

  /** Whether the account is an operator now (the list is read at start; an account's email may change). */
  async isOperator(accountId: string): Promise<boolean> {
    const account = await this.store.accounts.get(accountId).catch(() => null);
    return account !== null && this.emails.has(account.email);
  }
}
