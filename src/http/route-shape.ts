// What a request needs from its route's definition: the operation's name and the path's parameters.
import { operationOf, type Route } from './route.js';

/** What every request of a route needs from its definition, worked out once per route. */
const shapes = new WeakMap<Route, { operation: string; params: string[] }>();
export function shapeOf(route: Route): { operation: string; params: string[] } {
  let shape = shapes.get(route);
  if (!shape) shapes.set(route, (shape = { operation: operationOf(route), params: paramNames(route.path) }));
  return shape;
}

/** The path's parameters by name, decoded (a path without any gets a fresh empty record, not a map over nothing). */
export function paramsOf(names: readonly string[], values: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) params[names[i]!] = decodeParam(values[i] ?? '');
  return params;
}

export function paramNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

function decodeParam(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
