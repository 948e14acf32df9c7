// Filter matching and ordering over plain documents, with the same semantics as the Mongo adapter.
import type { FindOptions } from '../ports/collection.js';

type Condition = Record<string, unknown>;

const isOperator = (c: unknown): c is Condition =>
  typeof c === 'object' && c !== null && !Array.isArray(c) && Object.keys(c).some((k) => k.startsWith('$'));

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return -1;
  if (b === undefined || b === null) return 1;
  return (a as number | string) < (b as number | string) ? -1 : 1;
}

function matchesField(value: unknown, cond: unknown): boolean {
  if (!isOperator(cond)) return (value ?? null) === (cond ?? null);
  if ('$in' in cond) return (cond.$in as unknown[]).some((v) => (value ?? null) === (v ?? null));
  if ('$exists' in cond) return (value !== undefined) === cond.$exists;
  if (value === undefined || value === null) return false;
  if ('$gt' in cond && !(compare(value, cond.$gt) > 0)) return false;
  if ('$gte' in cond && !(compare(value, cond.$gte) >= 0)) return false;
  if ('$lt' in cond && !(compare(value, cond.$lt) < 0)) return false;
  if ('$lte' in cond && !(compare(value, cond.$lte) <= 0)) return false;
  return true;
}

export function matches(doc: object, filter: object): boolean {
  const rec = doc as Record<string, unknown>;
  return Object.entries(filter).every(([field, cond]) => matchesField(rec[field], cond));
}

export function order<T>(docs: T[], options: FindOptions<T> = {}): T[] {
  const sort = options.sort ?? [['_id' as keyof T & string, 1]];
  const sorted = [...docs].sort((x, y) => {
    for (const [field, dir] of sort) {
      const c = compare((x as Record<string, unknown>)[field], (y as Record<string, unknown>)[field]);
      if (c !== 0) return c * dir;
    }
    return 0;
  });
  const start = options.skip ?? 0;
  return sorted.slice(start, options.limit === undefined ? undefined : start + options.limit);
}
