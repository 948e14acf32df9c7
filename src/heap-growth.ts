// How far a node's V8 heap may grow past what its last full collection left live. V8 picks the
// factor itself (up to 4× under a fast allocation rate), so a node that provisions many boards in
// a burst keeps the garbage of the burst resident: bench/tenants.ts, 10,000 anonymous boards set up
// at 140-159 a second, 41.4 / 43.6 / 46.4 KB of RSS a board (29.4-34.4 of it anonymous memory)
// against 23.4 KB at a fixed 20% (11.4 anonymous; 26.4 at 50%), and claim → submit on one board
// within its noise (bench/engine.ts --only=queue: 920-990 cycles/s at 20%, 977-1,185 without).
// An operator's own --heap-growing-percent (NODE_OPTIONS or the command line) is kept.
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 20;

/** The V8 flag to set, or null when the node was started with one of its own. */
export function heapGrowthFlag(given: readonly string[]): string | null {
  return given.some((arg) => /--heap[-_]growing[-_]percent\b/.test(arg))
    ? null
    : `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/** Sets the heap's growth for this process (V8 reads it at each collection's new limit). */
export function limitHeapGrowth(): void {
  const flag = heapGrowthFlag([...process.execArgv, process.env.NODE_OPTIONS ?? '']);
  if (flag) setFlagsFromString(flag);
}
