// Shouts: coordination messages between agents on a board. Broadcast, scoped to an item, or
// direct (seen only by sender, addressee and operators, with a delivery receipt for the sender).
import { z } from 'zod';
import { PURGE_EVERY_MS } from '../board/retention.js';
import {
  postShout,
  readShouts,
  SHOUT_TRIM_EVERY,
  ShoutTrims,
  shoutView,
  SHOUTS_KEPT_PER_BOARD,
} from '../board/shouts.js';
import { RESOURCE_TOKEN_VIEW } from '../board/visibility.js';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Route } from '../http/route.js';
import { intInRange } from '../int-in-range.js';
import type { RouteDeps } from './deps.js';
import { WorkId } from '../board/schemas.js';

const LIST_DEFAULT = 100;
const LIST_MAX = 500;

const ShoutInput = z.strictObject({
  text: z.string().trim().min(1).max(2000),
  kind: z.enum(['info', 'warn', 'request', 'handoff']).default('info'),
  workId: WorkId.optional(),
  to: z
    .string()
    .regex(/^(user|agent):[\w-]{1,64}$/, 'must be a principal: user:<id> or agent:<id>')
    .optional(),
});
const ShoutQuery = z.object({
  since: z
    .string()
    .optional()
    .describe('A shout id from this board (anything else is 400 INVALID_CURSOR): shouts after it, oldest first.'),
  before: z
    .string()
    .optional()
    .describe(
      'A shout id from this board (anything else is 400 INVALID_CURSOR): the newest shouts before it, newest first (scrolling a feed back). Not with `since`.',
    ),
  order: z
    .enum(['oldest', 'newest'])
    .optional()
    .describe(
      'Without a cursor: `oldest` (default) starts at the oldest shout kept, `newest` at the newest, newest first.',
    ),
  limit: z.string().optional(),
  workId: z.string().optional(),
});
export const Shout = z.object({
  id: z.string(),
  from: z.string(),
  text: z.string(),
  kind: z.string(),
  workId: z.string().nullable(),
  to: z.string().nullable(),
  at: z.string(),
  deliveredAt: z.string().nullable(),
});

const base = { group: 'shouts', auth: 'bearer-or-session', project: 'required', rateHeaders: true } as const;

/** What the shouts routes use of the server's dependencies. */
export type ShoutDeps = Pick<RouteDeps, 'store' | 'boards' | 'notify'>;

export function shoutRoutes(deps: ShoutDeps): Route[] {
  const { boards, store } = deps;
  const trims = new ShoutTrims();
  return [
    defineRoute<z.infer<typeof ShoutInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/shouts',
      summary: 'Shout to the board (member): broadcast, about an item (`workId`), or to one principal (`to`).',
      description: `Counts against the write budget. Kept per the plan's history retention and to the last ${SHOUTS_KEPT_PER_BOARD} per board, trimmed every ${SHOUT_TRIM_EVERY} posts a node makes there (up to ${SHOUT_TRIM_EVERY - 1} more per node in between) and by the retention sweep every ${PURGE_EVERY_MS / 60_000} minutes.`,
      bodyKind: 'json',
      body: ShoutInput,
      rate: 'write',
      errors: ['ROLE_REQUIRED'],
      responses: { 201: { description: 'Posted.', schema: Shout } },
      async handler({ ctx, body }) {
        const call = boards.enter(ctx, 'member', 'shouts', body.workId);
        const shout = await postShout(
          store,
          call.boardId,
          ctx.project!.plan,
          { from: call.principal, text: body.text, kind: body.kind, workId: body.workId ?? null, to: body.to ?? null },
          ctx.now,
          trims.due(call.boardId),
        );
        deps.notify({
          kind: 'shout',
          boardId: call.boardId,
          shout: {
            id: shout._id,
            from: shout.from,
            text: shout.text,
            kind: shout.kind,
            workId: shout.workId,
            to: shout.to,
            at: shout.at,
          },
        });
        return { status: 201, body: shoutView(shout) };
      },
    }),
    defineRoute<undefined, z.infer<typeof ShoutQuery>>({
      ...base,
      method: 'get',
      path: '/api/shouts',
      summary:
        'Shouts a page at a time (viewer): after `since` oldest first, or the newest (before `before`, or with order=newest) newest first.',
      description: `${RESOURCE_TOKEN_VIEW} Direct shouts appear only to their sender, their addressee and operators (admin and owner); fetching marks the ones addressed to you delivered. limit 1..${LIST_MAX}, default ${LIST_DEFAULT}. \`next\` is the cursor for the following page in the same direction: pass it as \`since\` (oldest first) or \`before\` (newest first); newest first, it is null when the page came back short (no older shout left).`,
      bodyKind: 'none',
      query: ShoutQuery,
      rate: 'read',
      errors: ['ROLE_REQUIRED', 'INVALID_CURSOR'],
      responses: {
        200: { description: 'Shouts.', schema: z.object({ shouts: z.array(Shout), next: z.string().nullable() }) },
      },
      async handler({ ctx, query }) {
        const call = await boards.look(ctx, 'shouts', query.workId);
        for (const cursor of [query.since, query.before])
          if (cursor !== undefined && !cursor.startsWith(`${call.boardId}:`))
            throw new AppError('INVALID_CURSOR', 'since and before must be shout ids from this board.');
        if (query.since !== undefined && query.before !== undefined)
          throw new AppError('INVALID_CURSOR', 'Page one way at a time: since (forward) or before (back), not both.');
        const limit = intInRange(query.limit, 1, LIST_MAX, LIST_DEFAULT);
        const back = query.before !== undefined || query.order === 'newest';
        const answer = await readShouts(
          store,
          call.boardId,
          call.view,
          { since: query.since, before: query.before, newest: back, workId: query.workId, limit },
          ctx.now,
        );
        const next = back
          ? answer.length === limit
            ? answer.at(-1)!._id
            : null
          : answer.length
            ? answer.at(-1)!._id
            : (query.since ?? null);
        return { status: 200, body: { shouts: answer.map(shoutView), next } };
      },
    }),
  ];
}
