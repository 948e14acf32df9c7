// The audit row of a change already committed (a rewind, a pause, a change of who can act on a
// board or an account: DOMAIN.md "Operators"): written whatever it takes, since the change stands. Tried at once, and on failure again in the background, backing
// off to once a minute, until the store takes it. The row's id is fixed by the change, so a retry
// that raced a slow first write writes nothing twice.
import type { Logger } from 'pino';
import { DuplicateKeyError, type AuditRecord, type Store } from '../../store/ports/store.js';

/** A failed row is written again after this, doubling up to AUDIT_RETRY_MAX_MS. */
export const AUDIT_RETRY_FIRST_MS = 1000;
const AUDIT_RETRY_MAX_MS = 60_000;

/** Writes `row` (its `_id` fixed by the change it records); resolves after the first try, retrying in the background. */
export async function auditCommitted(
  store: Pick<Store, 'audit'>,
  row: AuditRecord,
  logger: Pick<Logger, 'error'>,
  what: string,
): Promise<void> {
  const write = async (): Promise<boolean> => {
    try {
      await store.audit.insert(row);
      return true;
    } catch (e) {
      if (e instanceof DuplicateKeyError) return true;
      logger.error(
        { err: e, boardId: row.projectId, action: row.action, ...row.data },
        `${what}: applied, but its audit row was not written yet; retrying`,
      );
      return false;
    }
  };
  if (await write()) return;
  const retry = (delayMs: number) =>
    setTimeout(
      () => void write().then((done) => done || retry(Math.min(delayMs * 2, AUDIT_RETRY_MAX_MS))),
      delayMs,
    ).unref();
  retry(AUDIT_RETRY_FIRST_MS);
}

/** Where a service sends the rows of its committed changes: auditCommitted over the node's store and logger. */
export type CommittedAudit = (row: AuditRecord) => Promise<void>;

export const committedAudit =
  (store: Pick<Store, 'audit'>, logger: Pick<Logger, 'error'>): CommittedAudit =>
  (row) =>
    auditCommitted(store, row, logger, row.action);
