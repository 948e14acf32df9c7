// The device flow (RFC 8628, DOMAIN.md "Agent onboarding"): start, approve, poll. Rules live in src/accounts/device-flow.ts.
import type { Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';

export function deviceRoutes(_deps: RouteDeps): Route[] {
  return [];
}
