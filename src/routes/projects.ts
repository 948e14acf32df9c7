// Projects (boards) of the account, under both /api/projects and the parallel /api/boards.
import { z } from 'zod';
import { createProject, deleteProject, listProjects, pageSize, PROJECT_NAME_MAX, renameProject, summarize } from '../accounts/projects.js';
import { atLeast, PROJECT_ID } from '../auth/project-selection.js';
import type { Identity } from '../auth/identity.js';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import { nonEmptyString, ProjectSummary } from './schemas.js';

const ListQuery = z.object({ limit: z.string().optional(), cursor: nonEmptyString('INVALID_CURSOR', 'cursor must be at least 1 character; omit it for the first page.').optional() });
const NAME_RULE = `A project name is 1 to ${PROJECT_NAME_MAX} printable characters.`;
// Code points, as the JSON Schema counts them and checkProjectName does (past surrounding whitespace, which is trimmed).
const NameBody = z.strictObject({
  name: nonEmptyString('INVALID_PROJECT_NAME', NAME_RULE).meta({ maxLength: PROJECT_NAME_MAX, description: `${NAME_RULE} Surrounding whitespace is trimmed; otherwise 400 INVALID_PROJECT_NAME.` }),
});
const ListResponse = z.object({ projects: z.array(ProjectSummary), pagination: z.object({ nextCursor: z.string().nullable(), cursorReset: z.boolean() }) });

export function projectRoutes(deps: RouteDeps): Route[] {
  const { store } = deps;

  /** The project named in the path, as this credential reaches it, with at least `role`. */
  async function target(identity: Identity, projectId: string, role: 'admin' | 'owner') {
    if (!PROJECT_ID.test(projectId)) throw new AppError('INVALID_PROJECT_ID');
    const project = await deps.selector.reachable(identity, projectId);
    if (!project) throw new AppError('PROJECT_SCOPE_DENIED');
    if (!atLeast(project.role, role)) throw new AppError('ROLE_REQUIRED', `This needs the ${role} role on the project.`);
    return project;
  }

  async function summaryFor(identity: Identity, projectId: string) {
    const [project, member, account] = await Promise.all([store.projects.get(projectId), store.members.get(`${projectId}:${identity.accountId}`), store.accounts.get(identity.accountId)]);
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
      responses: { 200: { description: 'A page of project summaries.', schema: ListResponse } },
      async handler({ ctx, query }) {
        const account = await store.accounts.get(ctx.identity!.accountId);
        if (!account) throw new AppError('UNAUTHENTICATED');
        return { status: 200, body: await listProjects(store, account._id, account.defaultProjectId, pageSize(query.limit), query.cursor) };
      },
    }),
    defineRoute<z.infer<typeof NameBody>, undefined>({
      method: 'post',
      path: base,
      group: 'projects',
      summary: 'Create an isolated board, within the plan’s project limit.',
      description: 'Sessions and account-scoped tokens only. The limit is the account’s: Pro’s when it owns a Pro board, else Free’s.',
      auth: 'bearer-or-session',
      accountScope: true,
      bodyKind: 'json',
      body: NameBody,
      rate: 'write',
      rateHeaders: true,
      errors: ['INVALID_PROJECT_NAME', 'FREE_PROJECT_LIMIT'],
      responses: { 201: { description: 'The created project’s summary.', schema: ProjectSummary } },
      async handler({ ctx, body }) {
        const project = await createProject(store, ctx.identity!.accountId, body.name, ctx.now);
        return { status: 201, body: await summaryFor(ctx.identity!, project._id) };
      },
    }),
    defineRoute<z.infer<typeof NameBody>, undefined>({
      method: 'patch',
      path: `${base}/{projectId}`,
      group: 'projects',
      summary: 'Rename a project (admin or owner).',
      auth: 'bearer-or-session',
      accountScope: true,
      bodyKind: 'json',
      body: NameBody,
      rate: 'write',
      errors: ['INVALID_PROJECT_NAME', 'INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'ROLE_REQUIRED'],
      responses: { 200: { description: 'The renamed project’s summary.', schema: ProjectSummary } },
      async handler({ ctx, body }) {
        const project = await target(ctx.identity!, ctx.params.projectId!, 'admin');
        await renameProject(store, project.id, body.name);
        return { status: 200, body: await summaryFor(ctx.identity!, project.id) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${base}/{projectId}`,
      group: 'projects',
      summary: 'Delete a project and its board, memberships and board tokens (owner).',
      auth: 'bearer-or-session',
      accountScope: true,
      bodyKind: 'none',
      rate: 'write',
      errors: ['INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'ROLE_REQUIRED'],
      responses: { 204: { description: 'Deleted.' } },
      async handler({ ctx }) {
        const project = await target(ctx.identity!, ctx.params.projectId!, 'owner');
        await deleteProject(store, project.id);
        deps.revoke({ kind: 'revoked', boardId: project.id });
        return { status: 204 };
      },
    }),
  ];

  return [...family('/api/projects'), ...family('/api/boards')];
}
