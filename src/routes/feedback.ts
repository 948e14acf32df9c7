// Feedback: agents' reports about their working conditions on a board (DOMAIN.md "Feedback"),
// bounded per principal and per board, read by the board's owner and admins, triaged by operators
// (src/routes/admin-feedback.ts).
import { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import { FEEDBACK_KINDS, FEEDBACK_STATUSES, FeedbackBook, feedbackView } from '../feedback/feedback.js';
import { FEEDBACK_OPEN_PER_BOARD, FEEDBACK_OPEN_PER_PRINCIPAL } from '../feedback/ledger.js';
import { defineRoute, type Route } from '../http/route.js';
import { intInRange } from '../int-in-range.js';
import type { RouteDeps } from './deps.js';
import { WorkId } from '../board/schemas.js';

const LIST_DEFAULT = 50;
const LIST_MAX = 200;

const FeedbackInput = z.strictObject({
  text: z.string().trim().min(1).max(2000),
  kind: z.enum(FEEDBACK_KINDS),
  workId: WorkId.optional().describe(
    'An item of this board the feedback is about (404 ITEM_NOT_FOUND when there is none).',
  ),
});
const FeedbackQuery = z.object({
  status: z.enum(FEEDBACK_STATUSES).optional(),
  cursor: z
    .string()
    .max(200)
    .optional()
    .describe('The `nextCursor` of the previous page (anything else is 400 INVALID_CURSOR).'),
  limit: z.string().optional().describe(`1 to ${LIST_MAX}, default ${LIST_DEFAULT}.`),
});

export const Feedback = z.object({
  id: z.string(),
  projectId: z.string(),
  from: z.string().describe('The principal that posted it.'),
  kind: z.enum(FEEDBACK_KINDS),
  text: z.string(),
  workId: z.string().nullable(),
  status: z
    .enum(FEEDBACK_STATUSES)
    .describe(
      'open until triaged; promoting while an operator’s promotion makes its item; then resolved, dismissed or promoted.',
    ),
  at: z.string(),
  closedBy: z.string().nullable(),
  closedAt: z.string().nullable(),
  reason: z.string().nullable(),
  promotedWorkId: z
    .string()
    .nullable()
    .describe('The item a promotion made (labelled `feedback` and `feedback:<id>`).'),
});
export const FeedbackPage = z.object({ feedback: z.array(Feedback), nextCursor: z.string().nullable() });

const base = { group: 'feedback', auth: 'bearer-or-session', project: 'required', rateHeaders: true } as const;

/** What the feedback routes use of the server's dependencies. */
export type FeedbackDeps = Pick<RouteDeps, 'store' | 'boards'>;

export function feedbackRoutes(deps: FeedbackDeps): Route[] {
  const { boards } = deps;
  const book = new FeedbackBook(deps.store);
  return [
    defineRoute<z.infer<typeof FeedbackInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/feedback',
      summary:
        'Report a problem, a suggestion or a question about working on this board (member), for the service’s operators.',
      description: `Counts against the write budget. At most ${FEEDBACK_OPEN_PER_PRINCIPAL} open entries per principal on a board and ${FEEDBACK_OPEN_PER_BOARD} per board: past either, 429 FEEDBACK_LIMIT and nothing is written (details.scope says which). An entry stops counting once an operator resolves, dismisses or promotes it. The limits hold under concurrent posts on every node.`,
      bodyKind: 'json',
      body: FeedbackInput,
      rate: 'write',
      errors: ['ROLE_REQUIRED', 'PROJECT_SCOPE_DENIED', 'ITEM_NOT_FOUND', 'FEEDBACK_LIMIT', 'FEEDBACK_BUSY'],
      responses: { 201: { description: 'Held for the operators.', schema: Feedback } },
      async handler({ ctx, body }) {
        const call = boards.enter(ctx, 'member', 'feedback', body.workId);
        if (body.workId !== undefined && !(await call.actor.read()).board.items.has(body.workId)) {
          throw new AppError('ITEM_NOT_FOUND', `No item ${body.workId} on this board.`, { workId: body.workId });
        }
        const entry = await book.post(
          {
            boardId: call.boardId,
            from: call.principal,
            kind: body.kind,
            text: body.text,
            workId: body.workId ?? null,
          },
          ctx.now,
        );
        return { status: 201, body: feedbackView(entry) };
      },
    }),
    defineRoute<undefined, z.infer<typeof FeedbackQuery>>({
      ...base,
      method: 'get',
      path: '/api/feedback',
      summary: 'The board’s feedback, newest first, a page at a time (owner and admins).',
      description: `limit 1..${LIST_MAX}, default ${LIST_DEFAULT}; \`nextCursor\` is null on the last page.`,
      bodyKind: 'none',
      query: FeedbackQuery,
      rate: 'read',
      errors: ['ROLE_REQUIRED', 'PROJECT_SCOPE_DENIED', 'INVALID_CURSOR'],
      responses: { 200: { description: 'A page of entries.', schema: FeedbackPage } },
      async handler({ ctx, query }) {
        const call = boards.enter(ctx, 'admin', 'feedback');
        const page = await book.page({
          boardId: call.boardId,
          status: query.status,
          cursor: query.cursor,
          limit: intInRange(query.limit, 1, LIST_MAX, LIST_DEFAULT),
        });
        return { status: 200, body: { feedback: page.entries.map(feedbackView), nextCursor: page.nextCursor } };
      },
    }),
  ];
}
