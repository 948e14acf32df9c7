// Who is acting: a cookie session's user, or a service token's stable agent principal.

export type Principal = `user:${string}` | `agent:${string}`;
export type TokenScope = 'account' | 'workspace' | 'resource';
export type Role = 'owner' | 'admin' | 'member' | 'viewer';

export interface SessionIdentity {
  kind: 'session';
  principal: Principal;
  accountId: string;
  sessionId: string;
  /** Set when an operator acts as this account through an impersonation session (DOMAIN.md "Operators"). */
  impersonation?: { operatorId: string; operatorSessionId: string };
}

export interface TokenIdentity {
  kind: 'token';
  principal: Principal;
  accountId: string;
  tokenId: string;
  agentId: string;
  scope: TokenScope;
  prefix: string;
  boardId: string | null;
  role: Role | null;
  /** Resource tokens: the work ids and operation groups they may touch. */
  resources: string[] | null;
}

export type Identity = SessionIdentity | TokenIdentity;

/** The workspace a request speaks for, used to aggregate error resolutions anonymously. */
export function workspaceOf(identity: Identity): string {
  return identity.kind === 'token' && identity.boardId ? `board:${identity.boardId}` : `account:${identity.accountId}`;
}

/**
 * A socket's own identity object, for a socket whose upgrade's origin is kept by it (an account's
 * own session, which may be an operator's: src/server/sockets.ts); other sockets, like a
 * credential's requests, share the one the authenticator keeps for its record. What is worked out
 * per identity (src/auth/project-selection.ts) is worked out for that shared one, not again for
 * each copy.
 */
const sharedIdentities = new WeakMap<Identity, Identity>();

/** A copy of `identity` of its own (for one socket); sharedIdentity of it gives `identity` back. */
export function ownIdentity<I extends Identity>(identity: I): I {
  const own = { ...identity };
  sharedIdentities.set(own, sharedIdentity(identity));
  return own;
}

/** The identity `identity` was copied from by ownIdentity, or itself. */
export const sharedIdentity = (identity: Identity): Identity => sharedIdentities.get(identity) ?? identity;
