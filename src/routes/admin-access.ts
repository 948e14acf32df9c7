// Operator routes: acting as an account, the address allowlist, and contacting an account (DOMAIN.md "Operators"). Rules live in src/admin/; these only bind them.
import type { Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';

export function adminAccessRoutes(_deps: RouteDeps): Route[] {
  return [];
}
