// Dotted-path assignment (`items.W-5.life`) as MongoDB's $set does it, on documents read from LMDB.

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
