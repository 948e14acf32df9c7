// The route table: every operation group, in one list.
import type { Route } from '../http/route.js';
import { authRoutes } from './auth.js';
import type { RouteDeps } from './deps.js';
import { systemRoutes } from './system.js';

export function routeTable(deps: Omit<RouteDeps, 'routes'>): Route[] {
  const table: Route[] = [];
  const full: RouteDeps = { ...deps, routes: () => table };
  table.push(...systemRoutes(full), ...authRoutes(full));
  return table;
}
