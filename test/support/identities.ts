// Identities as the authenticator makes them, for tests of the parts that take one without a server.
import type { TokenIdentity } from '../../src/auth/identity.js';

/** A workspace token's identity on `boardId` (an agent's, role member), with `over` changed. */
export const workspaceToken = (over: Partial<TokenIdentity> = {}): TokenIdentity => ({
  kind: 'token',
  principal: 'agent:agent-1',
  accountId: 'acct',
  tokenId: 'tok-1',
  agentId: 'agent-1',
  scope: 'workspace',
  prefix: 'agb_x',
  boardId: 'board',
  role: 'member',
  resources: null,
  ...over,
});
