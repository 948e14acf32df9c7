// How each MongoDB-wire server says a unique index refused a write, in one place: MongoDB answers
// code 11000 and names the index in keyPattern; the others differ, as named below.
import { MongoBulkWriteError, MongoServerError } from 'mongodb';

/** A refused write as the driver reports it: a server error, or one write of a bulk write. */
interface Refusal {
  code?: unknown;
  message?: string;
  errmsg?: string;
}

/**
 * Whether a server refused a write for a duplicate key.
 * - MongoDB, and FerretDB 2 on an insert or an update: code 11000.
 * - FerretDB 2 (DocumentDB) on findAndModify: a unique index is a PostgreSQL exclusion constraint,
 *   and its violation comes back unmapped, code 1 (InternalError), "conflicting key value violates
 *   exclusion constraint "documents_rum_index_<n>"", which names no index of ours.
 * - FerretDB 1.x on SQLite: SQLite's "UNIQUE constraint failed".
 */
function refusedAsDuplicate(e: Refusal): boolean {
  const message = e.errmsg ?? e.message ?? '';
  return (
    e.code === 11000 ||
    /duplicate key|UNIQUE constraint failed/i.test(message) ||
    (e.code === 1 && /conflicting key value violates exclusion constraint/.test(message))
  );
}

export function isDuplicateKey(e: unknown): e is MongoServerError {
  return e instanceof MongoServerError && refusedAsDuplicate(e);
}

/** The writes of a bulk write that failed, when every one failed on a duplicate key; else null. */
export function duplicateWrites(e: unknown): { index: number }[] | null {
  if (!(e instanceof MongoBulkWriteError)) return null;
  const errors = [e.writeErrors].flat();
  return errors.length && errors.every((w) => refusedAsDuplicate(w)) ? errors : null;
}

/**
 * The index a refusal's message names, when it names one. MongoDB: "index: <name> dup key";
 * FerretDB 2: "Duplicate key violation on the requested collection: Index '<name>'" (`_id_` for
 * the primary key); FerretDB 1.x: "<collection>_<name>". `'_id'` for the primary key, null when
 * the message names none of `names` (the caller then finds the owner of the key).
 */
export function indexNamedIn(message: string, names: readonly string[]): string | null {
  if (/Index '_id_'/.test(message)) return '_id';
  return names.find((name) => new RegExp(`(index: |_|Index ')${name}\\b`).test(message)) ?? null;
}
