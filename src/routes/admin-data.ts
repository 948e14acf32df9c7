// Operator routes: data (DOMAIN.md "Operators"). Rules live in src/admin/data.ts; these only bind them.
import { z } from 'zod';
import { DataDesk } from '../admin/data.js';
import { EXPORT_CONTENT_TYPE, LEFT_OUT } from '../admin/export.js';
import {
  IMPORT_BODY_LIMIT,
  IMPORT_DATA_DEPTH_MAX,
  IMPORT_EVENT_DATA_BYTES_MAX,
  IMPORT_EVENTS_MAX,
  IMPORT_ITEMS_MAX,
  IMPORT_LINES_MAX,
  ImportInput,
} from '../admin/import.js';
import { parseCookies } from '../http/cookies.js';
import { defineRoute, type BodyStream, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import { adminBase } from './admin-shared.js';

const Id = z.string().regex(/^[\w-]{1,100}$/, 'must be an account or board id');
const ExportQuery = z
  .strictObject({ userId: Id.optional(), projectId: Id.optional() })
  .refine((q) => (q.userId === undefined) !== (q.projectId === undefined), 'name exactly one of userId and projectId');

const Imported = z.object({
  projectId: z.string(),
  name: z.string(),
  from: z.string().describe('The exported board’s id.'),
  items: z.number().int(),
  events: z.number().int(),
  skipped: z
    .record(z.string(), z.number().int())
    .describe(
      'Lines read past, by kind: what an export holds beside the graph and the log (tokens, members, invitations, shouts, …).',
    ),
});

/** Reports a failure after the response started (its status is sent; the connection is cut), then lets it end the stream. */
async function* reported(chunks: AsyncGenerator<string>, onError: (e: unknown) => void): BodyStream {
  try {
    yield* chunks;
  } catch (e) {
    onError(e);
    throw e;
  }
}

/** What the admin-data routes use of the server's dependencies. */
export type AdminDataDeps = Pick<RouteDeps, 'store' | 'operators' | 'logger' | 'clock'>;

export function adminDataRoutes(deps: AdminDataDeps): Route[] {
  const data = new DataDesk(deps.store);
  return [
    defineRoute<undefined, z.infer<typeof ExportQuery>>({
      ...adminBase,
      method: 'get',
      path: '/api/admin/export',
      summary:
        'Everything an account (userId) or a board (projectId) holds, as newline-delimited JSON, streamed as it is read.',
      description:
        'The first line (kind `export`) names the scope and lists what is left out; then one line per record: `account`, `token`, `membership`, `billing`, `audit` of an account, then per board `board` (project and header), `item`, `doctrine`, `spec`, `member`, `invitation`, `token`, `transfer`, `event`, `shout`, `feedback`, `restorePoint` (metadata), `billing`, `billingEvent`, `audit`; the last line (kind `end`) counts every line, so a cut export tells. ' +
        `Never exported: ${Object.entries(LEFT_OUT.fields)
          .map(([kind, fields]) => `${kind}.${fields.join(`, ${kind}.`)}`)
          .join(', ')}, and the collections ${Object.keys(LEFT_OUT.collections).join(', ')}. Audited as admin.export.`,
      bodyKind: 'none',
      query: ExportQuery,
      errors: ['NOT_FOUND'],
      responses: {
        200: { description: 'The export, one JSON document per line.', contentType: 'application/x-ndjson' },
      },
      async handler({ ctx, query }) {
        const scope = query.userId !== undefined ? { userId: query.userId } : { projectId: query.projectId! };
        const { chunks, target } = await data.export(ctx, scope);
        const onError = (err: unknown) =>
          deps.logger.error(
            { reqId: ctx.requestId, route: ctx.operation, err },
            'export failed after it started: the connection is cut',
          );
        return {
          status: 200,
          contentType: EXPORT_CONTENT_TYPE,
          headers: { 'content-disposition': `attachment; filename="export-${target.replace(':', '-')}.ndjson"` },
          body: reported(chunks, onError),
        };
      },
    }),
    defineRoute<ImportInput, undefined>({
      ...adminBase,
      method: 'post',
      path: '/api/admin/import',
      summary:
        'A board’s export into an account as a new board: new id, the same items and graph, the log kept as history, none of the old credentials.',
      description:
        'The body is `{userId, name?, lines}`, `lines` being the export’s lines as JSON values (`jq -s \'{userId: "…", lines: .}\' export.ndjson`), whole: the `export` line first, one `board`, the `end` line last counting them all. ' +
        'Only the board, its items and its events are taken; the rest is read past (counted in `skipped`). Work ids stay; every event keeps its seq and time and is marked `imported`, and a `board.imported` event follows them. ' +
        'No lease survives (a claimed item is ready again, a verifying one awaits verification), and no token, invitation or member but the account as owner. ' +
        'The same export imported into the same account again (a retry whose answer was lost) answers the board the first import made, or makes it in place of one that never committed. ' +
        `The account’s plan limits its boards (FREE_PROJECT_LIMIT). At most ${IMPORT_BODY_LIMIT / 1024 / 1024} MiB, ${IMPORT_LINES_MAX} lines, ${IMPORT_ITEMS_MAX} items and ${IMPORT_EVENTS_MAX} events; an event’s \`data\` nests at most ${IMPORT_DATA_DEPTH_MAX} levels of objects and arrays and is at most ${IMPORT_EVENT_DATA_BYTES_MAX / 1024 / 1024} MiB as JSON (400 INVALID_INPUT naming its line otherwise). Audited as admin.import.`,
      bodyKind: 'json',
      body: ImportInput,
      largeBody: {
        limit: IMPORT_BODY_LIMIT,
        admit: (headers) =>
          deps.operators.admit(headers, parseCookies(headers['cookie'] ?? ''), deps.clock()).then(() => true),
      },
      errors: [
        'NOT_FOUND',
        'ACCOUNT_DELETED',
        'FREE_PROJECT_LIMIT',
        'ACCOUNT_BUSY',
        'INVALID_PROJECT_NAME',
        'CONFLICTING_DEPENDENCIES',
        'CROSS_PROJECT_FOLD',
        'CROSS_PROJECT_PARENT',
        'BOARD_BUSY',
      ],
      responses: { 201: { description: 'The new board.', schema: Imported } },
      async handler({ ctx, body }) {
        return { status: 201, body: await data.import(ctx, body) };
      },
    }),
  ];
}
