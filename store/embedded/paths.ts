// Dotted-path assignment and removal (`items.W-5.life`) as MongoDB's $set and $unset do them, on
// documents read from LMDB.

/** Sets `value` at `keys` inside `target`, creating objects along the way; `target` is changed. */
export function setPath(target: Record<string, unknown>, keys: readonly string[], value: unknown): void {
  let at = target;
  for (const key of keys.slice(0, -1)) {
    const child = at[key];
    at[key] = child && typeof child === 'object' ? child : {};
    at = at[key] as Record<string, unknown>;
  }
  at[keys.at(-1)!] = value;
}

/** Removes what `keys` names inside `target`, if it is there; `target` is changed. */
export function unsetPath(target: Record<string, unknown>, keys: readonly string[]): void {
  let at: unknown = target;
  for (const key of keys.slice(0, -1)) {
    at = at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
  }
  if (at && typeof at === 'object') delete (at as Record<string, unknown>)[keys.at(-1)!];
}
