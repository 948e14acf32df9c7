// Agent onboarding (DOMAIN.md "Agent onboarding"): enrollment codes, claim nonces, provisioning and anonymous boards. Rules live in src/accounts/onboarding.ts.
import type { Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';

export function onboardingRoutes(_deps: RouteDeps): Route[] {
  return [];
}
