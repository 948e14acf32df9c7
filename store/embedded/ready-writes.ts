// Where a write's puts and removals go: straight to LMDB inside a transaction (a throw aborts it),
// or made ready first for a block queued on LMDB's write thread. lmdb-js closes such a block in a
// `finally` and queues its start there too (write.js, ifVersion), so a put that throws while the
// block is being queued leaves the ones queued before it to land: a half-written commit. Made
// ready, every value is already its bytes and every key known to fit before the first is queued,
// and queuing them has nothing left to throw: the block lands whole or not at all.
import { asBinary, type Database, type Key } from 'lmdb';

/** What this file reads of a database: lmdb-js's own encoder and key writer, which its types leave out. */
interface DbInternals {
  encoder?: { encode(value: unknown): Uint8Array | string };
  writeKey(key: Key, target: Uint8Array, position: number): number;
  maxKeySize: number;
}

/** Puts and removals inside one write. */
export interface Writes {
  put<V, K extends Key>(db: Database<V, K>, key: K, value: V, version?: number): void;
  remove<V, K extends Key>(db: Database<V, K>, key: K): void;
}

/** Inside a transaction: each write goes to LMDB as it comes, and a throw aborts them all. */
export const DIRECT: Writes = {
  put: (db, key, value, version) => void (version === undefined ? db.put(key, value) : db.put(key, value, version)),
  remove: (db, key) => void db.remove(key),
};

/** Made ready now, queued later (`queue`, inside an ifVersion block) with nothing left to throw. */
export class ReadyWrites implements Writes {
  /** [db, key, bytes or null for a removal, version] per write, flat. */
  private readonly writes: unknown[] = [];

  put<V, K extends Key>(db: Database<V, K>, key: K, value: V, version?: number): void {
    checkKey(db, key);
    const encoder = (db as unknown as DbInternals).encoder;
    if (!encoder) throw new Error('a value made ready needs its database’s encoder');
    const bytes = encoder.encode(value);
    this.writes.push(db, key, typeof bytes === 'string' ? Buffer.from(bytes) : bytes, version);
  }

  remove<V, K extends Key>(db: Database<V, K>, key: K): void {
    checkKey(db, key);
    this.writes.push(db, key, null, undefined);
  }

  /** Throws now for a key LMDB would refuse once queued (one an ifVersion block checks, say). */
  check<V, K extends Key>(db: Database<V, K>, key: K): void {
    checkKey(db, key);
  }

  /** Queues every write made ready, in order: lmdb-js takes the bytes as they are (asBinary). */
  queue(): void {
    const w = this.writes;
    for (let i = 0; i < w.length; i += 4) {
      const db = w[i] as Database<unknown, Key>;
      const bytes = w[i + 2] as Uint8Array | null;
      if (bytes === null) db.remove(w[i + 1] as Key);
      else {
        const version = w[i + 3] as number | undefined;
        if (version === undefined) db.put(w[i + 1] as Key, asBinary(bytes));
        else db.put(w[i + 1] as Key, asBinary(bytes), version);
      }
    }
  }
}

let scratch = Buffer.alloc(0);

/**
 * Throws, as lmdb-js would while queuing it, for a key LMDB refuses: longer than its limit, empty,
 * or of a type a key cannot hold. A key of strings, numbers, null or booleans short enough is let through unwritten.
 */
function checkKey(db: object, key: Key): void {
  const { writeKey, maxKeySize } = db as unknown as DbInternals;
  if (safeBytes(key) <= maxKeySize) return;
  if (scratch.length < maxKeySize * 4) scratch = Buffer.alloc(maxKeySize * 4);
  let end: number;
  try {
    end = writeKey.call(db, key, scratch, 0);
  } catch (e) {
    if (e instanceof RangeError) end = Infinity;
    else throw e;
  }
  if (end > maxKeySize) throw new Error(`Key size is larger than the maximum key size (${maxKeySize})`);
  if (!(end > 0)) throw new Error(`Invalid key or zero length key is not allowed in LMDB ${String(key)}`);
}

/** What `key` takes at most as stored, or Infinity when it holds what this does not size. */
function safeBytes(key: Key): number {
  if (!Array.isArray(key)) return partBytes(key);
  if (key.length === 0) return Infinity;
  let n = key.length;
  for (const part of key) n += partBytes(part);
  return n;
}

/** What one part of a key takes at most as ordered-binary spells it: 3 bytes a UTF-16 unit and an escape, 9 a number. */
function partBytes(part: unknown): number {
  if (typeof part === 'string') return part.length * 3 + 1;
  if (typeof part === 'number') return 9;
  if (part === null || typeof part === 'boolean') return 1;
  return Infinity;
}
