// Board sharing (DOMAIN.md "Sharing"): invitations, members and transfers. Rules live in src/accounts/sharing.ts.
import type { Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';

export function sharingRoutes(_deps: RouteDeps): Route[] {
  return [];
}
