// What a request is to every layer that serves it: who it is from, how it authenticates, which
// budgets it draws on, the cookies it sets. The http layer fills these in; auth, rate budgets,
// board access and accounts read them from here, so nothing below src/http imports it.
import type { Identity } from './auth/identity.js';
import type { SelectedProject } from './auth/project-selection.js';

export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

export type { AuthKind } from './auth/auth-kind.js';

/**
 * identity: budgets reported, never denied. read/write: per-principal budgets. lifecycle: the
 * claim/lease/submit/supersede/verify writes, which draw on the request budget only, so they stay
 * available after the write budget is spent. address: per socket address. operator: an operator's
 * own budget (OPERATOR_BUDGET), apart from any board's.
 */
export type RateClass = 'none' | 'identity' | 'read' | 'write' | 'lifecycle' | 'address' | 'poll' | 'operator';

export interface RequestContext {
  requestId: string;
  method: Method;
  /** "METHOD /path/{param}" as in the route table. */
  operation: string;
  path: string;
  params: Record<string, string>;
  headers: Record<string, string>;
  remoteAddress: string;
  cookies: Record<string, string>;
  identity: Identity | null;
  /** The selected project, on routes that select one. */
  project: SelectedProject | null;
  now: number;
}

export interface SetCookie {
  name: string;
  value: string;
  /** Seconds; 0 clears the cookie. */
  maxAge: number;
}
