// Shouts: coordination messages between agents on a board. Broadcast, scoped to an item, or
// direct (seen only by sender, addressee and operators, with a delivery receipt for the sender).
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { atLeast } from '../auth/project-selection.js';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Route } from '../http/route.js';
import { intInRange } from '../int-in-range.js';
import { historySince } from '../plans.js';
import type { ShoutRecord } from '../../store/ports/store.js';
import type { RouteDeps } from './deps.js';
import { WorkId } from './board-schemas.js';

export const SHOUTS_KEPT_PER_BOARD = 5000;
const LIST_DEFAULT = 100;
const LIST_MAX = 500;

const ShoutInput = z.strictObject({
  text: z.string().trim().min(1).max(2000),
  kind: z.enum(['info', 'warn', 'request', 'handoff']).default('info'),
  workId: WorkId.optional(),
  to: z.string().regex(/^(user|agent):[\w-]{1,64}$/, 'must be a principal: user:<id> or agent:<id>').optional(),
});
const ShoutQuery = z.object({ since: z.string().optional(), limit: z.string().optional(), workId: z.string().optional() });
const Shout = z.object({ id: z.string(), from: z.string(), text: z.string(), kind: z.string(), workId: z.string().nullable(), to: z.string().nullable(), at: z.string(), deliveredAt: z.string().nullable() });

const view = (s: ShoutRecord) => ({ id: s._id, from: s.from, text: s.text, kind: s.kind, workId: s.workId, to: s.to, at: new Date(s.at).toISOString(), deliveredAt: s.deliveredAt === null ? null : new Date(s.deliveredAt).toISOString() });
const base = { group: 'shouts', auth: 'bearer-or-session', project: 'required', rateHeaders: true } as const;

export function shoutRoutes(deps: RouteDeps): Route[] {
  const { boards, store } = deps;

  /** Keeps the newest 5,000 and nothing older than the plan's history retention. */
  async function trim(boardId: string, since: number): Promise<void> {
    await store.shouts.deleteMany({ boardId, at: { $lt: since } });
    const excess = (await store.shouts.count({ boardId })) - SHOUTS_KEPT_PER_BOARD;
    if (excess > 0) {
      const oldest = await store.shouts.select({ boardId }, ['at'], { sort: [['_id', 1]], limit: excess });
      await store.shouts.deleteMany({ _id: { $in: oldest.map((s) => s._id) } });
    }
  }

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
        const id = `${call.boardId}:${ctx.now.toString(36).padStart(10, '0')}:${randomBytes(4).toString('hex')}`;
        const shout: ShoutRecord = { _id: id, version: 1, boardId: call.boardId, from: call.principal, text: body.text, kind: body.kind, workId: body.workId ?? null, to: body.to ?? null, at: ctx.now, deliveredAt: null };
        await store.shouts.insert(shout);
        deps.notify({ kind: 'shout', boardId: call.boardId, shout: { id, from: shout.from, text: shout.text, kind: shout.kind, workId: shout.workId, to: shout.to, at: shout.at } });
        await trim(call.boardId, historySince(ctx.project!.plan, ctx.now));
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
        const operator = atLeast(call.role, 'admin');
        const shouts: ShoutRecord[] = [];
        // Direct shouts of others are skipped, so read in pages until the answer is full.
        for (let after = query.since; shouts.length < limit; ) {
          const page = await store.shouts.find({ boardId: call.boardId, ...(after ? { _id: { $gt: after } } : {}), ...(query.workId ? { workId: query.workId } : {}) }, { sort: [['_id', 1]], limit });
          shouts.push(...page.filter((s) => s.to === null || operator || s.to === call.principal || s.from === call.principal));
          if (page.length < limit) break;
          after = page.at(-1)!._id;
        }
        const answer = shouts.slice(0, limit);
        for (const s of answer) {
          if (s.to === call.principal && s.deliveredAt === null) {
            s.deliveredAt = ctx.now;
            await store.shouts.update(s._id, s.version, { deliveredAt: ctx.now });
          }
        }
        return { status: 200, body: { shouts: answer.map(view), next: answer.length ? answer.at(-1)!._id : (query.since ?? null) } };
      },
    }),
  ];
}
