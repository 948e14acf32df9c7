// Which codes a route can answer with: its own, plus those its pipeline stages raise.
import type { ErrorCode } from '../errors/registry.js';
import type { Route } from './route.js';

export function routeErrors(route: Route): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors);
  if (route.bodyKind === 'json' || route.bodyKind === 'optional-json') {
    for (const c of ['INVALID_INPUT', 'INVALID_JSON', 'JSON_REQUIRED', 'BODY_TOO_LARGE'] as const) codes.add(c);
  }
  if (route.bodyKind === 'raw') codes.add('BODY_TOO_LARGE');
  if (route.query) codes.add('INVALID_INPUT');
  if (route.auth === 'session') for (const c of ['UNAUTHENTICATED', 'AUTH_UNAVAILABLE'] as const) codes.add(c);
  if (route.auth === 'session-optional') codes.add('AUTH_UNAVAILABLE');
  // The operator gate answers anyone else as an unknown path (src/admin/gate.ts).
  if (route.auth === 'operator') codes.add('NOT_FOUND');
  if (route.auth === 'bearer-or-session') {
    for (const c of ['INVALID_SERVICE_TOKEN', 'EXPIRED_TOKEN', 'UNAUTHENTICATED', 'AUTH_UNAVAILABLE'] as const)
      codes.add(c);
    if (!route.accountScope) codes.add('AUTH_REQUIRED');
  }
  if (route.accountScope) codes.add('PROJECT_SCOPE_DENIED');
  if (route.project)
    for (const c of ['INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'BOARD_CLOSED'] as const) codes.add(c);
  if (route.project === 'required' || route.project === 'owned') codes.add('PROJECT_REQUIRED');
  if (route.method !== 'get' && route.bodyKind !== 'raw') codes.add('CSRF_REJECTED');
  if (route.rate !== 'none' && route.rate !== 'identity') codes.add('RATE_LIMITED');
  if (route.refusedWhileImpersonating) codes.add('IMPERSONATION_FORBIDDEN');
  codes.add('INTERNAL');
  return [...codes];
}
