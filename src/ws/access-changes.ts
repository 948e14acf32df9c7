// What ends a socket's watch once it began: a revoked credential, a changed membership or a deleted
// board, heard as notices; and what this node did not hear (the bus was down, or a change crashed
// before its notice), found by revalidate reading each credential and role again.
import type { Identity } from '../auth/identity.js';
import type { MembershipNotice, RevokedNotice } from '../auth/access-notices.js';
import type { AccessChecks } from './access-checks.js';
import { transmit, type Connection } from './connection.js';
import type { Firehose } from './firehose.js';
import type { OperatorAccess } from './operator-access.js';
import { CLOSE } from './protocol.js';
import type { Subscriptions } from './subscriptions.js';

export interface AccessChangesDeps {
  subscriptions: Pick<Subscriptions, 'connections' | 'subsOf' | 'unwatch' | 'accountOf'>;
  access: Pick<AccessChecks, 'reachable' | 'membershipChanged'>;
  firehose: Pick<Firehose<Connection>, 'sockets' | 'unwatch'>;
  operators?: Pick<OperatorAccess, 'admits'>;
  /** Whether a socket's credential still stands. */
  stillValid(identity: Identity): Promise<boolean>;
}

/** Ends a subscription the server took away, and tells the socket why. */
export function drop(
  subscriptions: Pick<Subscriptions, 'unwatch'>,
  conn: Connection,
  boardId: string,
  reason: string,
): void {
  if (subscriptions.unwatch(conn, boardId)) transmit(conn, JSON.stringify({ type: 'unsubscribed', boardId, reason }));
}

/** Why a subscription ended when the socket's role on the board changed (null: no longer a member). */
export const roleChanged = (role: string | null): string =>
  role === null
    ? 'You are no longer a member of this board.'
    : `Your role on this board is now ${role}; subscribe again.`;

/** Why an operator's firehose or watch of a board they are no member of ended. */
export const NO_LONGER_OPERATOR = 'This account is no longer an operator.';

export class AccessChanges {
  constructor(private readonly deps: AccessChangesDeps) {}

  /** A member's role changed or they left: their sockets stop watching the board (a new subscribe is checked under the new role). */
  membership(notice: MembershipNotice): void {
    const { subscriptions } = this.deps;
    this.deps.access.membershipChanged(notice.boardId, notice.accountId);
    for (const conn of [...subscriptions.connections()]) {
      if (subscriptions.accountOf(conn) === notice.accountId)
        drop(subscriptions, conn, notice.boardId, roleChanged(notice.role));
    }
  }

  /**
   * Closes a revoked credential's sockets, and those of the impersonation sessions it held up (an
   * operator's own session revoked, or their account's sessions: Authenticator.operatorPresent); a
   * deleted board's watchers are unsubscribed. An impersonation's socket closed so has its
   * credential checked once more, which writes the impersonation's end down if its operator is
   * gone indeed (src/admin/impersonation.ts): nothing may present that session again.
   */
  revoked(notice: RevokedNotice): void {
    const tokens = notice.tokenIds?.length ? new Set(notice.tokenIds) : null;
    const orphaned = new Map<string, Identity>();
    for (const conn of [...this.deps.subscriptions.connections()]) {
      const id = conn.identity;
      const operator = id.kind === 'session' ? id.impersonation : undefined;
      const operatorGone =
        operator !== undefined &&
        (operator.operatorSessionId === notice.sessionId ||
          operator.operatorId === notice.accountSessions ||
          operator.operatorId === notice.accountId);
      if (operatorGone && id.kind === 'session') orphaned.set(id.sessionId, id);
      const revoked =
        (id.kind === 'session' && (id.sessionId === notice.sessionId || id.accountId === notice.accountSessions)) ||
        operatorGone ||
        (id.kind === 'token' &&
          (id.tokenId === notice.tokenId ||
            tokens?.has(id.tokenId) === true ||
            (notice.boardId !== undefined && id.boardId === notice.boardId))) ||
        id.accountId === notice.accountId ||
        (notice.accountId !== undefined && this.deps.subscriptions.accountOf(conn) === notice.accountId);
      if (revoked) conn.close(CLOSE.revoked, 'the credential was revoked');
      else if (notice.boardId !== undefined)
        drop(this.deps.subscriptions, conn, notice.boardId, 'The board was deleted.');
    }
    for (const identity of orphaned.values()) void this.deps.stillValid(identity).catch(() => undefined);
  }

  /**
   * Accounts were written (ids null: any of them): an operator's standing is read from the account
   * (OperatorGate.isOperator), so one who is no longer an operator loses at once, on every node
   * (the write's `records.changed` notice), the impersonation sockets their standing held up
   * (Authenticator.operatorPresent, asked through stillValid), and on their own sockets the boards
   * they watched as operator and the firehose.
   */
  async accountsChanged(ids: readonly string[] | null): Promise<void> {
    const changed = (accountId: string) => ids === null || ids.includes(accountId);
    const held = [...this.deps.subscriptions.connections()].filter((conn) => {
      const id = conn.identity;
      if (id.kind !== 'session') return false;
      return id.impersonation ? changed(id.impersonation.operatorId) : changed(id.accountId);
    });
    await this.closeEnded(held, true);
    await this.recheckFirehose([...this.deps.firehose.sockets()].filter((conn) => changed(conn.identity.accountId)));
  }

  /**
   * Closes the sockets whose credential no longer stands: one that expired, or a revocation this
   * node did not hear of (the bus was down). One store read per credential.
   */
  async revalidate(): Promise<void> {
    await this.closeEnded([...this.deps.subscriptions.connections()], true);
    await this.recheckFirehose([...this.deps.firehose.sockets()]);
  }

  /** Closes those of `conns` whose credential no longer stands (one store read per credential); with `roles`, rechecks the rest's roles. */
  private async closeEnded(conns: readonly Connection[], roles: boolean): Promise<void> {
    const byCredential = new Map<string, Connection[]>();
    for (const conn of conns) {
      const id = conn.identity;
      const key = id.kind === 'session' ? `s:${id.sessionId}` : `t:${id.tokenId}:${id.prefix}`;
      (byCredential.get(key) ?? byCredential.set(key, []).get(key)!).push(conn);
    }
    for (const same of byCredential.values()) {
      const valid = await this.deps.stillValid(same[0]!.identity).catch(() => true); // a store hiccup closes nothing
      if (!valid) for (const conn of same) conn.close(CLOSE.revoked, 'the credential was revoked');
      else if (roles) await this.recheckRoles(same);
    }
  }

  /**
   * Ends the firehose of those of `conns` no longer an operator's: those watching it when an
   * account change is heard, and one just put on it (Hub), which a change heard while its
   * subscribe was audited passed by.
   */
  async recheckFirehose(conns: readonly Connection[]): Promise<void> {
    for (const conn of conns) {
      const still = await this.deps.operators?.admits(conn.identity).catch(() => true); // a store hiccup ends nothing
      if (!still && this.deps.firehose.unwatch(conn))
        transmit(
          conn,
          JSON.stringify({
            type: 'unsubscribed',
            topics: ['firehose'],
            reason: NO_LONGER_OPERATOR,
          }),
        );
    }
  }

  /**
   * A membership change this node did not hear of: each board the credential's sockets watch is
   * checked again, once per credential and board, and a lost or changed role ends the subscription.
   */
  private async recheckRoles(conns: Connection[]): Promise<void> {
    const { subscriptions } = this.deps;
    const boards = new Set(conns.flatMap((conn) => [...(subscriptions.subsOf(conn)?.keys() ?? [])]));
    for (const boardId of boards) {
      const project = await this.deps.access.reachable(conns[0]!, boardId).catch(() => undefined); // a store hiccup ends nothing
      if (project === undefined) continue;
      for (const conn of conns) {
        const sub = subscriptions.subsOf(conn)?.get(boardId);
        if (!sub || sub.lastSeq < 0 || project?.role === sub.role) continue; // (a subscription still starting checked its role just now)
        drop(subscriptions, conn, boardId, roleChanged(project === null ? null : project.role));
      }
    }
  }
}
