// Operator routes: people (DOMAIN.md "Operators"). Rules live in src/admin/; these only bind them.
import type { Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';

export function adminPeopleRoutes(_deps: RouteDeps): Route[] {
  return [];
}
