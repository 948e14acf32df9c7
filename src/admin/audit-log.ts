// GET /api/admin/audit: every audit row, newest first, filtered by actor, target, board, action
// and time. One condition is read through its index (actor+at, target+at, projectId+at, else at);
// the others are checked on the rows read, at most MAX_SCAN rows per page, so a rare action never
// makes one request read the whole log: such a page may come back short, with a cursor to go on.
// A row made through an impersonation session names the operator (`impersonatedBy`) beside the
// account that acted (`actor`). The page names the accounts its rows mention by their address.
import { AppError } from '../errors/app-error.js';
import type { AuditRecord, Filter, Store } from '../../store/ports/store.js';
import { accountIdOf, namedAccounts } from './named-accounts.js';

const MAX_SCAN = 2_000;
const CHUNK = 200;

export interface AuditQuery {
  actor?: string;
  target?: string;
  projectId?: string;
  /** Exact, or a prefix when it ends with `*` (e.g. `admin.*`). */
  action?: string;
  from?: number;
  to?: number;
  cursor?: string;
  limit: number;
}

interface Position {
  at: number;
  id: string;
}

const CURSOR = /^(\d{1,15})\.(.{1,200})$/s;

export function encodeCursor(p: Position): string {
  return Buffer.from(`${p.at}.${p.id}`).toString('base64url');
}

function decodeCursor(cursor: string): Position {
  const m = /^[\w-]{1,400}$/.test(cursor) ? CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8')) : null;
  if (!m) throw new AppError('INVALID_CURSOR', 'Pass nextCursor exactly as received, or omit it.');
  return { at: Number(m[1]), id: m[2]! };
}

/** Whether the row is after `p` in newest-first order (older, or as old with a smaller id). */
const after = (row: AuditRecord, p: Position) => row.at < p.at || (row.at === p.at && row._id < p.id);

export async function auditPage(store: Pick<Store, 'audit' | 'accounts'>, q: AuditQuery) {
  const position = q.cursor === undefined ? null : decodeCursor(q.cursor);
  // The condition read through an index; the rest are matched on what it reads.
  const indexed: Filter<AuditRecord> =
    q.actor !== undefined
      ? { actor: q.actor }
      : q.target !== undefined
        ? { target: q.target }
        : q.projectId !== undefined
          ? { projectId: q.projectId }
          : {};
  const prefix = q.action?.endsWith('*') ? q.action.slice(0, -1) : null;
  const matches = (row: AuditRecord) =>
    (q.actor === undefined || row.actor === q.actor) &&
    (q.target === undefined || row.target === q.target) &&
    (q.projectId === undefined || row.projectId === q.projectId) &&
    (q.action === undefined || (prefix !== null ? row.action.startsWith(prefix) : row.action === q.action));
  const filtered =
    q.action !== undefined ||
    Object.keys(indexed).length < [q.actor, q.target, q.projectId].filter((v) => v !== undefined).length;
  const chunk = filtered ? CHUNK : q.limit + 1;

  const rows: AuditRecord[] = [];
  let last: Position | null = position;
  let upper = Math.min(q.to ?? Number.MAX_SAFE_INTEGER, position?.at ?? Number.MAX_SAFE_INTEGER);
  let scanned = 0;
  let more = true;
  // Rows sharing one millisecond are read again by the next read (and skipped): the reads are bounded too.
  for (let reads = 0; rows.length < q.limit && scanned < MAX_SCAN && more && reads <= MAX_SCAN / CHUNK + 1; reads++) {
    const read = await store.audit.find(
      { ...indexed, at: q.from === undefined ? { $lte: upper } : { $gte: q.from, $lte: upper } },
      {
        sort: [
          ['at', -1],
          ['_id', -1],
        ],
        limit: chunk,
      },
    );
    more = read.length === chunk;
    let stoppedEarly = false;
    for (const [i, row] of read.entries()) {
      if (last && !after(row, last)) continue;
      scanned++;
      last = { at: row.at, id: row._id };
      if (matches(row)) rows.push(row);
      if (rows.length === q.limit || scanned >= MAX_SCAN) {
        stoppedEarly = i < read.length - 1;
        break;
      }
    }
    if (stoppedEarly) more = true;
    if (read.length) upper = read.at(-1)!.at;
  }
  // A page that ends exactly where the log does still offers its cursor when the last read was full: the next page is then empty.
  const views = rows.map(auditView);
  const accounts = await namedAccounts(store, views.flatMap(accountsIn));
  return { rows: views, nextCursor: more && last ? encodeCursor(last) : null, scanned, accounts };
}

/** The accounts a row names: its actor, its target, the operator behind an impersonated actor. */
export const accountsIn = (row: ReturnType<typeof auditView>): (string | null)[] => [
  accountIdOf(row.actor),
  accountIdOf(row.target),
  row.impersonatedBy,
];

/** A row as operators read it: the operator behind an impersonated actor lifted out of the request's origin, kept in `data`. */
export function auditView(row: AuditRecord) {
  const impersonatedBy = typeof row.data.impersonatedBy === 'string' ? row.data.impersonatedBy : null;
  return {
    id: row._id,
    at: new Date(row.at).toISOString(),
    actor: row.actor,
    impersonatedBy,
    action: row.action,
    target: row.target ?? null,
    projectId: row.projectId,
    data: row.data,
  };
}
