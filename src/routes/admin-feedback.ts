// Operator routes: feedback triage (DOMAIN.md "Operators", "Feedback"). Rules live in
// src/admin/feedback.ts; these only bind them.
import { z } from 'zod';
import { FeedbackDesk, PROMOTION_STALE_MS, PROMOTION_WAIT_MS } from '../admin/feedback.js';
import { PROJECT_ID } from '../auth/project-selection.js';
import { FEEDBACK_STATUSES, FeedbackBook } from '../feedback/feedback.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import { adminBase, PageQuery, Reason } from './admin-shared.js';
import { Feedback } from './feedback.js';

const AdminFeedbackPage = z.object({
  feedback: z.array(
    Feedback.extend({ boardName: z.string().nullable().describe('The board’s name; null when the board is gone.') }),
  ),
  nextCursor: z.string().nullable(),
});

const ListQuery = PageQuery.extend({
  status: z.enum(FEEDBACK_STATUSES).optional(),
  projectId: z
    .string()
    .regex(PROJECT_ID, 'must be 1 to 64 letters, digits, "-" or "_"')
    .optional()
    .describe('One board’s feedback only.'),
});
const ResolveBody = z.strictObject({ reason: Reason.optional() }).optional();
const ReasonBody = z.strictObject({ reason: Reason });
const Closed = z.object({ feedback: Feedback });
const Promoted = z.object({
  feedback: Feedback,
  workId: z.string().describe('The item made from the entry (or made before, when it was promoted already).'),
  created: z.boolean().describe('False when the entry had been promoted already: no second item was made.'),
});

/** What the admin-feedback routes use of the server's dependencies. */
export type AdminFeedbackDeps = Pick<RouteDeps, 'store' | 'boards' | 'clock'>;

export function adminFeedbackRoutes(deps: AdminFeedbackDeps): Route[] {
  const desk = new FeedbackDesk(deps.store, new FeedbackBook(deps.store), deps.boards, deps.clock);
  const id = (params: Record<string, string | undefined>): string => params.id ?? '';
  return [
    defineRoute<undefined, z.infer<typeof ListQuery>>({
      ...adminBase,
      method: 'get',
      path: '/api/admin/feedback',
      summary: 'Every board’s feedback, newest first, by status and board if asked.',
      bodyKind: 'none',
      query: ListQuery,
      errors: ['INVALID_CURSOR', 'INVALID_INPUT'],
      responses: { 200: { description: 'A page of entries, each with its board’s name.', schema: AdminFeedbackPage } },
      handler: async ({ query }) => ({
        status: 200,
        body: await desk.list({
          boardId: query.projectId,
          status: query.status,
          cursor: query.cursor,
          limit: query.limit,
        }),
      }),
    }),
    defineRoute<z.infer<typeof ResolveBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: '/api/admin/feedback/{id}/resolve',
      summary:
        'Mark an open entry resolved (the problem is fixed, the question answered); it no longer counts against the limits.',
      bodyKind: 'optional-json',
      body: ResolveBody,
      errors: ['FEEDBACK_NOT_FOUND', 'FEEDBACK_CLOSED'],
      responses: { 200: { description: 'The entry, resolved.', schema: Closed } },
      handler: async ({ ctx, body }) => ({
        status: 200,
        body: await desk.close(ctx, id(ctx.params), 'resolved', body?.reason ?? null),
      }),
    }),
    defineRoute<z.infer<typeof ReasonBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: '/api/admin/feedback/{id}/dismiss',
      summary: 'Dismiss an open entry, saying why; it no longer counts against the limits.',
      bodyKind: 'json',
      body: ReasonBody,
      errors: ['FEEDBACK_NOT_FOUND', 'FEEDBACK_CLOSED'],
      responses: { 200: { description: 'The entry, dismissed.', schema: Closed } },
      handler: async ({ ctx, body }) => ({
        status: 200,
        body: await desk.close(ctx, id(ctx.params), 'dismissed', body.reason),
      }),
    }),
    defineRoute<z.infer<typeof ReasonBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: '/api/admin/feedback/{id}/promote',
      sends: ['create', 'event'],
      summary:
        'Make one item on the entry’s board from it (labelled `feedback` and `feedback:<id>`, the text in its description); the entry becomes promoted.',
      description: `One item per entry, even when operators promote it at the same moment: one of them makes it, the others wait for it (up to ${PROMOTION_WAIT_MS / 1000} s, else 503 FEEDBACK_BUSY) and answer with the same item and \`created: false\`; so does a promote of an entry promoted before. A promotion that died half way is taken over after ${PROMOTION_STALE_MS / 1000} s by the next promote, which adopts an item the dead one made rather than making a second.`,
      bodyKind: 'json',
      body: ReasonBody,
      errors: ['FEEDBACK_NOT_FOUND', 'FEEDBACK_CLOSED', 'FEEDBACK_BUSY', 'NOT_FOUND', 'BOARD_BUSY'],
      responses: { 200: { description: 'The entry, promoted, and its item.', schema: Promoted } },
      handler: async ({ ctx, body }) => ({ status: 200, body: await desk.promote(ctx, id(ctx.params), body.reason) }),
    }),
  ];
}
