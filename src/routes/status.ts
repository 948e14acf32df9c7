// Board reads: the status snapshot and the activity log (newest first).
import { z } from 'zod';
import { priorityChain, stalled } from '../../machines/board.js';
import { ITEM_STATES } from '../../machines/item-types.js';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';

const ActivityQuery = z.object({ before: z.string().regex(/^\d{1,12}$/).optional(), limit: z.string().optional() });
const Event = z.object({ seq: z.number().int(), type: z.string(), actor: z.string(), workId: z.string().nullable(), at: z.string(), data: z.record(z.string(), z.unknown()) });
const Status = z.object({
  projectId: z.string(),
  name: z.string(),
  version: z.number().int(),
  lastSeq: z.number().int(),
  counts: z.record(z.string(), z.number().int()),
  chainHead: z.array(z.object({ workId: z.string(), title: z.string(), priority: z.number().int() })),
  leases: z.array(z.object({ workId: z.string(), holder: z.string(), purpose: z.string(), fencingToken: z.number().int(), expiresAt: z.string() })),
  awaitingVerification: z.array(z.string()),
  stalled: z.array(z.string()),
});

const ACTIVITY_DEFAULT = 50;
const ACTIVITY_MAX = 200;
const base = { group: 'status', auth: 'bearer-or-session', project: 'required', rateHeaders: true, bodyKind: 'none', rate: 'read' } as const;

export function statusRoutes(deps: RouteDeps): Route[] {
  const { boards, store } = deps;
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/status',
      summary: 'The board at a glance: counts by state, the head of the priority chain, active leases, items awaiting verification, stalled items.',
      description: 'Stalled items depend on a cancelled item and wait for an operator to re-point them.',
      errors: ['ROLE_REQUIRED'],
      responses: { 200: { description: 'The snapshot.', schema: Status } },
      async handler({ ctx }) {
        const call = boards.enter(ctx, 'viewer', 'status');
        const { board, record } = await call.actor.read();
        const items = Object.values(board.items);
        const counts = Object.fromEntries(ITEM_STATES.map((s) => [s, items.filter((i) => i.state === s).length]));
        return {
          status: 200,
          body: {
            projectId: call.boardId,
            name: ctx.project!.name,
            version: record.version,
            lastSeq: record.lastSeq,
            counts,
            chainHead: priorityChain(board).slice(0, 10).map((i) => ({ workId: i.workId, title: i.title, priority: i.priority })),
            leases: items.flatMap((i) => (i.life.lease ? [{ workId: i.workId, holder: i.life.lease.holder, purpose: i.life.lease.purpose, fencingToken: i.life.lease.fencingToken, expiresAt: new Date(i.life.lease.expiresAt).toISOString() }] : [])),
            awaitingVerification: items.filter((i) => i.state === 'awaiting_verify').map((i) => i.workId),
            stalled: stalled(board),
          },
        };
      },
    }),
    defineRoute<undefined, z.infer<typeof ActivityQuery>>({
      ...base,
      method: 'get',
      path: '/api/activity',
      summary: 'The board’s event log, newest first; page with `before` = the last seq you saw.',
      description: `Every accepted change appends events with a per-board seq, strictly increasing with no gaps. limit 1..${ACTIVITY_MAX}, default ${ACTIVITY_DEFAULT}.`,
      query: ActivityQuery,
      errors: ['ROLE_REQUIRED', 'INVALID_CURSOR'],
      responses: { 200: { description: 'Events, newest first.', schema: z.object({ events: z.array(Event), nextBefore: z.number().int().nullable() }) } },
      async handler({ ctx, query }) {
        const call = boards.enter(ctx, 'viewer', 'history');
        const limit = query.limit && /^\d+$/.test(query.limit) && Number(query.limit) >= 1 && Number(query.limit) <= ACTIVITY_MAX ? Number(query.limit) : ACTIVITY_DEFAULT;
        if (query.before === '0') throw new AppError('INVALID_CURSOR', 'before must be a seq of at least 1.');
        const filter = query.before ? { boardId: call.boardId, seq: { $lt: Number(query.before) } } : { boardId: call.boardId };
        const events = await store.events.find(filter, { sort: [['seq', -1]], limit });
        return {
          status: 200,
          body: {
            events: events.map((e) => ({ seq: e.seq, type: e.type, actor: e.actor, workId: e.workId, at: new Date(e.at).toISOString(), data: e.data })),
            nextBefore: events.length === limit ? events.at(-1)!.seq : null,
          },
        };
      },
    }),
  ];
}
