// Projects (boards) of the account, under both /api/projects and the parallel /api/boards.
import { z } from 'zod';
import { createProject, deleteBoard, listProjects, pageSize, renameProject, summarize } from '../accounts/projects.js';
import { boardFor } from '../accounts/sharing.js';
import type { Identity } from '../auth/identity.js';
import { originOf } from '../audit-row.js';
import { setBoardPaused } from '../board/pause.js';
import { committedAudit } from '../board/committed-audit.js';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import { nonEmptyString, ProjectName, ProjectSummary } from './schemas.js';

const ListQuery = z.object({
  limit: z.string().optional(),
  cursor: nonEmptyString(
    'INVALID_CURSOR',
    'cursor must be at least 1 character; omit it for the first page.',
  ).optional(),
});
const NameBody = z.strictObject({
  name: ProjectName,
});
// DOMAIN.md "Pausing a board": the same PATCH pauses and resumes the board (`paused`).
const PatchBody = z
  .strictObject({
    name: NameBody.shape.name.optional(),
    paused: z
      .boolean()
      .optional()
      .describe('true pauses the board, false resumes it (admin or owner; idempotent; audited).'),
  })
  .refine((b) => b.name !== undefined || b.paused !== undefined, { message: 'Send name, paused, or both.' })
  .meta({ minProperties: 1 });
const PatchReply = ProjectSummary.extend({
  paused: z.boolean().optional().describe('Present when the request sent `paused`: whether the board is paused now.'),
  pausedBy: z.string().nullable().optional().describe('Who paused it (a principal), null while it runs.'),
  pausedAt: z.string().nullable().optional(),
});
const PAUSING =
  '`paused: true` pauses the board, `false` resumes it (DOMAIN.md "Pausing a board"; admin or owner). While it is paused, claims and every change to the work graph or an item’s state answer 409 BOARD_PAUSED: ' +
  'POST /api/claim, /api/submit, /api/supersede, /api/verify, /api/items, /api/items/batch, /api/items/reorder, /api/items/{workId}/state, /override and /progress, and PATCH /api/items/{workId}. ' +
  'Renew and release (POST /api/lease), heartbeats, shouts, comments, doctrine and spec (not part of the work graph a rewind swaps), and every read go on; leases keep their deadlines and expire as usual; a rewind is allowed (pause, preview, apply, resume). ' +
  'The pause is board state decided in the board’s own commit order on every node: a command decided after it commits is refused. Pausing a paused board (or resuming a running one) changes nothing and logs nothing; each change logs board.paused or board.resumed (pushed to sockets on the items and activity topics), is audited (board.pause, board.resume), and shows in GET /api/status.';
const ListResponse = z.object({
  projects: z.array(ProjectSummary),
  pagination: z.object({ nextCursor: z.string().nullable(), cursorReset: z.boolean() }),
});

/** What the projects routes use of the server's dependencies. */
export type ProjectDeps = Pick<RouteDeps, 'store' | 'selector' | 'boards' | 'logger' | 'revoke' | 'billing'>;

export function projectRoutes(deps: ProjectDeps): Route[] {
  const { store } = deps;
  const audit = committedAudit(store, deps.logger);

  async function summaryFor(identity: Identity, projectId: string) {
    const [project, member, account] = await Promise.all([
      store.projects.get(projectId),
      store.members.get(`${projectId}:${identity.accountId}`),
      store.accounts.get(identity.accountId),
    ]);
    if (!project || !member) throw new AppError('PROJECT_SCOPE_DENIED');
    return summarize(store, project, member, account?.defaultProjectId ?? null);
  }

  const family = (base: '/api/projects' | '/api/boards'): Route[] => [
    defineRoute<undefined, z.infer<typeof ListQuery>>({
      method: 'get',
      path: base,
      group: 'projects',
      summary: 'Owned boards and accepted shared boards (pending invitations excluded), cursor-paginated.',
      description:
        '`limit` is an integer 1 to 200 (any other value gives 50). Pass `pagination.nextCursor` as `cursor`; a malformed cursor, or one whose page size or project count no longer matches, restarts at the first page with `cursorReset: true`. ' +
        'Summaries carry counts, last activity, ownership, role and whether the board is the starred default; never workspace ids, the owner’s identity, items or evidence. `agentCount` counts the distinct agents holding live tokens for the board.',
      auth: 'session',
      bodyKind: 'none',
      query: ListQuery,
      project: 'optional',
      rate: 'none',
      errors: ['INVALID_CURSOR'],
      responses: { 200: { description: 'A page of board summaries.', schema: ListResponse } },
      async handler({ ctx, query }) {
        const account = await store.accounts.get(ctx.identity!.accountId);
        if (!account) throw new AppError('UNAUTHENTICATED');
        return {
          status: 200,
          body: await listProjects(store, account._id, account.defaultProjectId, pageSize(query.limit), query.cursor),
        };
      },
    }),
    defineRoute<z.infer<typeof NameBody>, undefined>({
      method: 'post',
      path: base,
      group: 'projects',
      summary: 'Create an isolated board, within the plan’s board limit.',
      description:
        'Sessions and account-scoped tokens only. The limit is the account’s: Pro’s when it owns a Pro board, else Free’s. Audited (board.create).',
      auth: 'bearer-or-session',
      accountScope: true,
      bodyKind: 'json',
      body: NameBody,
      rate: 'write',
      rateHeaders: true,
      errors: ['INVALID_PROJECT_NAME', 'FREE_PROJECT_LIMIT', 'ACCOUNT_BUSY'],
      responses: { 201: { description: 'The created board’s summary.', schema: ProjectSummary } },
      async handler({ ctx, body }) {
        const project = await createProject(
          store,
          { by: ctx.identity!, origin: originOf(ctx), audit },
          body.name,
          ctx.now,
        );
        return { status: 201, body: await summaryFor(ctx.identity!, project._id) };
      },
    }),
    defineRoute<z.infer<typeof PatchBody>, undefined>({
      method: 'patch',
      path: `${base}/{projectId}`,
      sends: ['pause'],
      group: 'projects',
      summary: 'Rename a board, or pause or resume it (admin or owner).',
      description: PAUSING,
      auth: 'bearer-or-session',
      accountScope: true,
      bodyKind: 'json',
      body: PatchBody,
      rate: 'write',
      errors: ['INVALID_PROJECT_NAME', 'INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'ROLE_REQUIRED', 'BOARD_BUSY'],
      responses: {
        200: { description: 'The board’s summary; with the pause when `paused` was sent.', schema: PatchReply },
      },
      async handler({ ctx, body }) {
        const project = await boardFor(deps, ctx.identity!, ctx.params.projectId!, 'admin');
        if (body.name !== undefined) await renameProject(store, project.id, body.name);
        const pause =
          body.paused === undefined
            ? {}
            : await setBoardPaused(
                deps,
                deps.boards.enterNamed(project, ctx.identity!.principal),
                body.paused,
                originOf(ctx),
              );
        return { status: 200, body: { ...(await summaryFor(ctx.identity!, project.id)), ...pause } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${base}/{projectId}`,
      group: 'projects',
      refusedWhileImpersonating: true,
      summary: 'Delete a board with its items, memberships and board tokens (owner; audited: board.delete).',
      description:
        'A live (or past_due) subscription of the board is cancelled at the payment provider first; when that fails, nothing is deleted (502).',
      auth: 'bearer-or-session',
      accountScope: true,
      bodyKind: 'none',
      rate: 'write',
      errors: [
        'INVALID_PROJECT_ID',
        'PROJECT_SCOPE_DENIED',
        'ROLE_REQUIRED',
        'PROVIDER_UNAVAILABLE',
        'PROVIDER_REQUEST_FAILED',
        'PROVIDER_RESPONSE_INVALID',
      ],
      responses: { 204: { description: 'Deleted.' } },
      async handler({ ctx }) {
        const project = await boardFor(deps, ctx.identity!, ctx.params.projectId!, 'owner');
        await deleteBoard(store, { by: ctx.identity!, origin: originOf(ctx), audit }, project, ctx.now, deps.billing);
        deps.revoke({ kind: 'revoked', boardId: project.id });
        return { status: 204 };
      },
    }),
  ];

  return [...family('/api/projects'), ...family('/api/boards')];
}
