// The operators' data desk (DOMAIN.md "Operators", Data): an account's or a board's export and a
// board's import into an account (src/admin/export.ts, src/admin/import.ts), each with its audit row
// written before the answer: an export's once the scope is found, before its first byte is sent.
import type { Store } from '../../store/ports/store.js';
import { auditOperatorAction, type OperatorCtx } from './audit.js';
import { exportOf, type ExportScope } from './export.js';
import { importBoard, type ImportedBoard, type ImportInput } from './import.js';

type Ctx = OperatorCtx;

export interface Export {
  chunks: AsyncGenerator<string>;
  /** The audit row's target: `account:<id>` or `board:<id>`. */
  target: string;
}

export class DataDesk {
  constructor(private readonly store: Store) {}

  /** The export of the scope, as chunks to stream (404 NOT_FOUND, and no audit row, when it names nothing). */
  async export(ctx: Ctx, scope: ExportScope): Promise<Export> {
    const chunks = await exportOf(this.store, scope, ctx.now);
    const target = 'userId' in scope ? `account:${scope.userId}` : `board:${scope.projectId}`;
    await auditOperatorAction(this.store, ctx, {
      action: 'export',
      target,
      projectId: 'projectId' in scope ? scope.projectId : null,
    });
    return { chunks, target };
  }

  /** Imports the export's lines into the account as a new board, in the operator's name. */
  async import(ctx: Ctx, input: ImportInput): Promise<ImportedBoard> {
    const imported = await importBoard(this.store, input, ctx.identity!.principal, ctx.now);
    const { projectId, from, items, events } = imported;
    await auditOperatorAction(this.store, ctx, {
      action: 'import',
      target: `board:${projectId}`,
      projectId,
      data: { userId: input.userId, from, items, events },
    });
    return imported;
  }
}
