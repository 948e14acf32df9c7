// The usage port: the operators' counter rows (src/admin/usage.ts), added to in one atomic store
// command each instead of a read-modify-write.
import type { Collection } from './collection.js';
import type { UsageRecord } from './records.js';

/** What a usage row holds besides its id, version and counters: set when `add` creates it, never changed by `add`. */
export type UsageFields = Pick<UsageRecord, 'day' | 'scope' | 'key'>;

export interface UsageCollection extends Collection<UsageRecord> {
  /**
   * Adds `counts` to the row's counters (a counter the row lacks starts at 0), creating the row
   * with `fields`, version 1 and `counts` when there is none; otherwise `fields` are left as stored
   * and the version rises by one. One atomic command: concurrent adds to one row all land, summed
   * exactly, and exactly one of them creates it. True when this call created the row.
   *
   * Counter names become field paths: a name that is empty, holds a '.', starts with '$' or is
   * `__proto__`, or a count that is not a finite number, is refused with an Error (nothing written).
   */
  add(id: string, fields: UsageFields, counts: Readonly<Record<string, number>>): Promise<boolean>;
}

/** Throws unless every counter name and count is one `add` takes (see there). */
export function checkCounts(counts: Readonly<Record<string, number>>): void {
  for (const [name, n] of Object.entries(counts)) {
    if (name === '' || name.includes('.') || name.startsWith('$') || name === '__proto__')
      throw new Error(`usage counter name refused: ${JSON.stringify(name)}`);
    if (typeof n !== 'number' || !Number.isFinite(n))
      throw new Error(`usage counter ${name}: ${String(n)} is not a finite number`);
  }
}
