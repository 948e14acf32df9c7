// What the doctrine and spec sections share: views held by key, each replaced only by a newer
// version, so a REST read and the events heard around it can land in either order.

/** `held` with each of `views` that is newer than the one held (the same map when none is). */
export function newerOf<T extends { version: number }>(
  held: ReadonlyMap<string, T>,
  views: readonly T[],
  key: (v: T) => string,
): ReadonlyMap<string, T> {
  let next: Map<string, T> | null = null;
  for (const v of views) {
    const k = key(v);
    if ((held.get(k)?.version ?? 0) >= v.version) continue;
    next ??= new Map(held);
    next.set(k, v);
  }
  return next ?? held;
}

/** Work ids in board order (W-2 before W-10). */
export const byWorkId = (a: string, b: string): number => Number(a.slice(2)) - Number(b.slice(2));

/** How many of `list` have each value of `of`, as "2 ratified · 1 proposed" (the values with none left out). */
export function tally<T>(list: readonly T[], of: (t: T) => string, order: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const t of list) counts.set(of(t), (counts.get(of(t)) ?? 0) + 1);
  return order
    .filter((o) => counts.get(o))
    .map((o) => `${counts.get(o)} ${o}`)
    .join(' · ');
}
