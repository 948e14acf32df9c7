// Spec: what a fleet builds to (DOMAIN.md "Doctrine and spec"). The routes parse and bind;
// src/board/spec.ts holds the rules, the board's actor decides every change.
import { z } from 'zod';
import { SPEC_STATUSES } from '../../machines/board-entries.js';
import { SpecDesk } from '../board/spec.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';

const ClauseInput = z.strictObject({
  title: z.string().trim().min(1).max(200),
  text: z.string().trim().min(1).max(4000),
});
const PatchInput = z.strictObject({
  version: z
    .number()
    .int()
    .min(1)
    .describe('The clause’s version as you read it: a stale one is 409 VERSION_MISMATCH and changes nothing.'),
  title: z.string().trim().min(1).max(200).optional(),
  text: z.string().trim().min(1).max(4000).optional(),
  status: z.enum(SPEC_STATUSES).optional(),
});

export const ClauseView = z.object({
  clauseId: z.string().describe('Server-assigned, `S-<n>`; clauses are never deleted (retire one instead).'),
  title: z.string(),
  text: z.string(),
  status: z.enum(SPEC_STATUSES),
  createdBy: z.string(),
  updatedBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number().int().describe('Bumps on every change.'),
  linkedBy: z.array(z.string()).describe('The work ids of the items linking the clause (their `spec`).'),
});

const base = { group: 'spec', auth: 'bearer-or-session', project: 'required', rateHeaders: true } as const;
const EVENTS =
  'Every change is a board event (`spec.created`, `spec.updated`; workId null, the clause in `data.clause`) in the same log as the items’, pushed to sockets.';

/** What the spec routes use of the server's dependencies. */
export type SpecDeps = Pick<RouteDeps, 'boards'>;

export function specRoutes(deps: SpecDeps): Route[] {
  const desk = new SpecDesk(deps.boards);
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/spec',
      summary: 'The board’s spec clauses in id order (viewer), each with the items linking it.',
      bodyKind: 'none',
      rate: 'read',
      errors: ['ROLE_REQUIRED'],
      responses: { 200: { description: 'Every clause.', schema: z.object({ clauses: z.array(ClauseView) }) } },
      handler: async ({ ctx }) => ({ status: 200, body: await desk.list(ctx) }),
    }),
    defineRoute<z.infer<typeof ClauseInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/spec',
      sends: ['create-clause'],
      summary: 'Add a spec clause (admin); it starts as a draft, with the next id `S-<n>`.',
      description: EVENTS,
      bodyKind: 'json',
      body: ClauseInput,
      rate: 'write',
      errors: ['ROLE_REQUIRED', 'BOARD_BUSY'],
      responses: { 201: { description: 'The new clause.', schema: ClauseView } },
      handler: async ({ ctx, body }) => ({ status: 201, body: await desk.create(ctx, body) }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/spec/{clauseId}',
      summary: 'One spec clause (viewer), with the items linking it.',
      bodyKind: 'none',
      rate: 'read',
      errors: ['SPEC_CLAUSE_NOT_FOUND', 'ROLE_REQUIRED'],
      responses: { 200: { description: 'The clause.', schema: ClauseView } },
      handler: async ({ ctx }) => ({ status: 200, body: await desk.get(ctx, ctx.params.clauseId) }),
    }),
    defineRoute<z.infer<typeof PatchInput>, undefined>({
      ...base,
      method: 'patch',
      path: '/api/spec/{clauseId}',
      sends: ['patch-clause'],
      summary: 'Edit a spec clause at its expected version (admin): title, text, status (draft, accepted, retired).',
      description: `Items linking a retired clause are listed in GET /api/status (\`retiredSpecLinks\`). A patch that changes nothing answers the clause as it is, logs nothing and keeps its version. ${EVENTS}`,
      bodyKind: 'json',
      body: PatchInput,
      rate: 'write',
      errors: ['SPEC_CLAUSE_NOT_FOUND', 'VERSION_MISMATCH', 'ROLE_REQUIRED', 'BOARD_BUSY'],
      responses: { 200: { description: 'The clause as edited.', schema: ClauseView } },
      handler: async ({ ctx, body }) => ({
        status: 200,
        body: await desk.patch(ctx, ctx.params.clauseId, body),
      }),
    }),
  ];
}
