// Query-string numbers: lenient by contract (a bad page size falls back to the default). Below
// src/http, so page sizes chosen in accounts and board modules read them without the http layer.

/** The integer in `raw` when it is one within [min, max], else `fallback`. */
export function intInRange(raw: string | undefined, min: number, max: number, fallback: number): number {
  if (raw === undefined || !/^\d+$/.test(raw)) return fallback;
  const n = Number(raw);
  return n >= min && n <= max ? n : fallback;
}
