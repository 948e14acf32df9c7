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
