// A record with strings of its own, for one kept long (the identity cache). msgpackr, which the
// embedded store decodes documents with, reads a record's strings as one string and hands out
// slices of it, and each slice keeps that whole string alive: a token record read from the store
// held 895 bytes of heap, 617 with its strings made anew.

/** V8 copies a slice shorter than this instead of pointing into the string it came from. */
const SLICED_FROM = 13;

/** `value` copied, each string in it made anew: nothing in it points into a string decoded with others. */
export function ownStrings<T>(value: T): T {
  return copy(value) as T;
}

function copy(value: unknown): unknown {
  if (typeof value === 'string')
    return value.length < SLICED_FROM ? value : (JSON.parse(JSON.stringify(value)) as string);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copy);
  // Only plain records are copied; anything else (a Date, bytes) is kept as it is.
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = copy(v);
  return out;
}
