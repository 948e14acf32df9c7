// How a filter is read from LMDB: by _id, by the declared index that covers most of it (an
// equality prefix, then a range or one of several values (`$in`) on the next field), or, failing
// both, by a scan. Bounds only narrow the read; every document read is still matched against the
// whole filter.
import type { Key as LmdbKey } from 'lmdb';
import type { Filter, FindOptions, IndexSpec } from '../ports/store.js';

/** Sorts above every string, number, boolean and null an index key can hold. */
export const HIGH = String.fromCodePoint(0x10ffff).repeat(2);

type Key = LmdbKey[];
type Range = { $gt?: LmdbKey; $gte?: LmdbKey; $lt?: LmdbKey; $lte?: LmdbKey };

export type Plan =
  | { kind: 'ids'; ids: string[]; ordered: false }
  | { kind: 'primary'; start?: string; end?: string; reverse: boolean; ordered: boolean }
  | { kind: 'index'; index: IndexSpec; start: Key; end: Key; reverse: boolean; ordered: boolean; exact: boolean }
  /** An equality prefix, then one of several values of the next field (`$in`): each read as its own range. */
  | { kind: 'points'; index: IndexSpec; prefixes: Key[]; ordered: false; exact: boolean };

const isRange = (c: unknown): c is Range =>
  typeof c === 'object' &&
  c !== null &&
  !Array.isArray(c) &&
  Object.keys(c).length > 0 &&
  Object.keys(c).every((k) => ['$gt', '$gte', '$lt', '$lte'].includes(k));
const isOperator = (c: unknown): boolean => typeof c === 'object' && c !== null && !Array.isArray(c);
/** `{ $in: [...] }` of values an index key holds as they are (so each is one range, and no two overlap). */
const isIn = (c: unknown): c is { $in: unknown[] } =>
  isOperator(c) &&
  Object.keys(c as object).join() === '$in' &&
  Array.isArray((c as { $in: unknown }).$in) &&
  (c as { $in: unknown[] }).$in.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v));

/** The value an index key holds for a field (a missing one indexes as null, as on MongoDB). */
export const keyValue = (v: unknown): LmdbKey => (v ?? null) as LmdbKey;

function lower(prefix: Key, r: Range | undefined): Key {
  if (r?.$gte !== undefined) return [...prefix, r.$gte];
  if (r?.$gt !== undefined) return [...prefix, r.$gt, HIGH];
  return prefix;
}

function upper(prefix: Key, r: Range | undefined): Key {
  if (r?.$lt !== undefined) return [...prefix, r.$lt];
  if (r?.$lte !== undefined) return [...prefix, r.$lte, HIGH];
  return [...prefix, HIGH];
}

/** The sort the read order gives for free: the fields after the prefix, in one direction. */
function sortFollows(
  sort: FindOptions<unknown>['sort'],
  rest: readonly string[],
): { ordered: boolean; reverse: boolean } {
  if (!sort?.length) return { ordered: true, reverse: false };
  const dir = sort[0]![1];
  const ok = sort.every(([field, d], i) => d === dir && (field === rest[i] || (field === '_id' && i === rest.length)));
  return { ordered: ok, reverse: ok && dir === -1 };
}

export function planFor<T>(filter: Filter<T>, indexes: readonly IndexSpec[], options: FindOptions<T> = {}): Plan {
  const conds = filter as Record<string, unknown>;
  const sort = (options.sort ?? [['_id', 1]]) as FindOptions<unknown>['sort'];
  const id = conds._id;
  if (id !== undefined && !isOperator(id)) return { kind: 'ids', ids: [id as string], ordered: false };
  if (id !== undefined && isOperator(id) && '$in' in (id as object))
    return { kind: 'ids', ids: [...new Set((id as { $in: string[] }).$in)], ordered: false };

  let best: { index: IndexSpec; used: number; prefix: Key; range?: Range; among?: unknown[] } | null = null;
  for (const index of indexes) {
    const prefix: Key = [];
    let range: Range | undefined;
    let among: unknown[] | undefined;
    for (const field of index.fields) {
      const c = conds[field];
      if (c !== undefined && !isOperator(c)) prefix.push(keyValue(c));
      else {
        if (isRange(c)) range = c;
        else if (isIn(c)) among = c.$in;
        break;
      }
    }
    // One of a few values reads nearly as well as one value, and better than a range.
    const used = prefix.length + (among ? 0.75 : range ? 0.5 : 0);
    if (used > 0 && (!best || used > best.used)) best = { index, used, prefix, range, among };
  }
  if (best) {
    const { index, prefix, range, among } = best;
    const covered = index.fields.slice(0, prefix.length + (among ? 1 : 0));
    // Only equalities (and `$in`), all in the prefix: the keys in bounds are exactly the matches.
    const exact = !range && Object.keys(conds).every((f) => covered.includes(f));
    if (among) {
      const prefixes = [...new Set(among.map(keyValue))].map((v) => [...prefix, v]);
      return { kind: 'points', index, prefixes, ordered: false, exact };
    }
    const { ordered, reverse } = sortFollows(sort, index.fields.slice(prefix.length));
    return { kind: 'index', index, start: lower(prefix, range), end: upper(prefix, range), reverse, ordered, exact };
  }
  const { ordered, reverse } = sortFollows(sort, []);
  const r = isRange(id) ? id : undefined;
  const start = (r?.$gte ?? r?.$gt) as string | undefined;
  const end = r?.$lte !== undefined ? `${r.$lte as string}${HIGH}` : (r?.$lt as string | undefined);
  return { kind: 'primary', start, end, reverse, ordered };
}
