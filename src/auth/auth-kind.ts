// How a route or socket asks to be authenticated: the authenticator reads it, the route table names it.

/**
 * none: no credential read (signup, login, webhook). session-optional: uses a live session when
 * present (logout). session: cookie session required. bearer-or-session: either credential.
 */
/** operator: an operator's own session only; anyone else is answered as an unknown path (src/admin/gate.ts). */
export type AuthKind = 'none' | 'session-optional' | 'session' | 'bearer-or-session' | 'operator';
