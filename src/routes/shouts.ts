// Shouts: coordination messages between agents on a board. Broadcast, scoped to an item, or
// direct (seen only by sender, addressee and operators, with a delivery receipt for the sender).
import { z } from 'zod';
import { atLeast } from '../auth/project-selection.js';
import { postShout, readShouts, SHOUTS_KEPT_PER_BOARD } from '../board/shouts.js';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Route } from '../http/route.js';
import { intInRange } from '../int-in-range.js';
import type { ShoutRecord } from '../../store/ports/store.js';
import type { RouteDeps } from './deps.js';
import { WorkId } from './board-schemas.js';

const LIST_DEFAULT = 100;
const LIST_MAX = 500;

const ShoutInput = z.strictObject({
  text: z.string().trim().min(1).max(2000),
  kind: z.enum(['info', 'warn', 'request', 'handoff']).default('info'),
  workId: WorkId.optional(),
  to: z.string().regex(/^(user|agent):[\w-]{1,64}$/, 'must be a principal: user:<id> or agent:<id>').optional(),
});
const ShoutQuery = z.object({ since: z.string().optional().describe('A shout id from this board (anything else is 400 INVALID_CURSOR): shouts after it.'), limit: z.string().optional(), workId: z.string().optional() });
export const Shout = z.object({ id: z.string(), from: z.string(), text: z.string(), kind: z.string(), workId: z.string().nullable(), to: z.string().nullable(), at: z.string(), deliveredAt: z.string().nullable() });

const view = (s: ShoutRecord) => ({ id: s._id, from: s.from, text: s.text, kind: s.kind, workId: s.workId, to: s.to, at: new Date(s.at).toISOString(), deliveredAt: s.deliveredAt === null ? null : new Date(s.deliveredAt).toISOString() });
const base = { group: 'shouts', auth: 'bearer-or-session', project: 'required', rateHeaders: true } as const;

export function shoutRoutes(deps: RouteDeps): Route[] {
  const { boards, store } = deps;
  return [
    defineRoute<z.infer<typeof ShoutInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/shouts',
      summary: 'Shout to the board (member): broadcast, about an item (`workId`), or to one principal (`to`).',
      description: `Counts against the write budget. Kept per the plan's history retention and at most the last ${SHOUTS_KEPT_PER_BOARD} per board.`,
      bodyKind: 'json',
      body: ShoutInput,
      rate: 'write',
      errors: ['ROLE_REQUIRED'],
      responses: { 201: { description: 'Posted.', schema: Shout } },
      async handler({ ctx, body }) {
        const call = boards.enter(ctx, 'member', 'shouts', body.workId);
        const shout = await postShout(store, call.boardId, ctx.project!.plan, { from: call.principal, text: body.text, kind: body.kind, workId: body.workId ?? null, to: body.to ?? null }, ctx.now);
        deps.notify({ kind: 'shout', boardId: call.boardId, shout: { id: shout._id, from: shout.from, text: shout.text, kind: shout.kind, workId: shout.workId, to: shout.to, at: shout.at } });
        return { status: 201, body: view(shout) };
      },
    }),
    defineRoute<undefined, z.infer<typeof ShoutQuery>>({
      ...base,
      method: 'get',
      path: '/api/shouts',
      summary: 'Shouts after `since` (the last id you saw), oldest first (viewer).',
      description: `Direct shouts appear only to their sender, their addressee and operators (admin and owner); fetching marks the ones addressed to you delivered. limit 1..${LIST_MAX}, default ${LIST_DEFAULT}.`,
      bodyKind: 'none',
      query: ShoutQuery,
      rate: 'read',
      errors: ['ROLE_REQUIRED', 'INVALID_CURSOR'],
      responses: { 200: { description: 'Shouts.', schema: z.object({ shouts: z.array(Shout), next: z.string().nullable() }) } },
      async handler({ ctx, query }) {
        const call = boards.enter(ctx, 'viewer', 'shouts', query.workId);
        if (query.since !== undefined && !query.since.startsWith(`${call.boardId}:`)) throw new AppError('INVALID_CURSOR', 'since must be a shout id from this board.');
        const limit = intInRange(query.limit, 1, LIST_MAX, LIST_DEFAULT);
        const reader = { principal: call.principal, operator: atLeast(call.role, 'admin') };
        const answer = await readShouts(store, call.boardId, reader, { since: query.since, workId: query.workId, limit }, ctx.now);
        return { status: 200, body: { shouts: answer.map(view), next: answer.length ? answer.at(-1)!._id : (query.since ?? null) } };
      },
    }),
  ];
}
