// What ends or changes a credential's reach, told to every node so their sockets follow at once.
import type { Role } from './identity.js';

/** Close the sockets of a revoked credential: one session, all of an account's sessions, one token, a whole account, or every token of a deleted board. */
export type RevokedNotice = {
  kind: 'revoked';
  sessionId?: string;
  accountSessions?: string;
  tokenId?: string;
  accountId?: string;
  /**
   * The account's tokens, revoked with it: a socket is known by the account its token had when it
   * opened, and a token moves with a board its account takes over.
   */
  tokenIds?: string[];
  boardId?: string;
};

/** An account's role on a board changed (null: no longer a member): its sockets on that board are unsubscribed and must subscribe again under the new role. */
export type MembershipNotice = {
  kind: 'membership';
  boardId: string;
  accountId: string;
  role: Role | null;
};
