// Which operations raise each error code, as GET /api/errors lists them: the places the registry
// names that are not routes, then every route whose answers include the code, as the OpenAPI
// document lists them (its `errors` and what its pipeline stages add). One reading of the route
// table, so the two documents cannot tell different stories.
import { ERROR_CODES, raisedApart, type ErrorCode } from '../errors/registry.js';
import { routeErrors } from '../http/route-errors.js';
import { operationOf, type Route } from '../http/route.js';

export function raisedBy(routes: readonly Route[]): Record<ErrorCode, string[]> {
  const byCode = new Map(ERROR_CODES.map((code) => [code, new Set(raisedApart(code))]));
  for (const route of routes) for (const code of routeErrors(route)) byCode.get(code)!.add(operationOf(route));
  return Object.fromEntries([...byCode].map(([code, operations]) => [code, [...operations]])) as Record<
    ErrorCode,
    string[]
  >;
}
