// Board reads: the status snapshot and the activity log (newest first).
import { z } from 'zod';
import { chain, countsByState, liveLeases, priorityChain, stalled } from '../../machines/board.js';
import { metricsOf, type BoardStats } from '../../machines/board-stats.js';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Route } from '../http/route.js';
import { intInRange } from '../int-in-range.js';
import { historySince } from '../plans.js';
import type { EventRecord } from '../../store/ports/store.js';
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

const HeartbeatInput = z.strictObject({ status: z.enum(['idle', 'working', 'blocked', 'offline']).default('working'), note: z.string().max(500).default(''), workId: z.string().regex(/^W-\d{1,9}$/).optional() });
const Agent = z.object({ principal: z.string(), status: z.string().nullable(), note: z.string().nullable(), workId: z.string().nullable(), lastSeenAt: z.string().nullable(), online: z.boolean(), leases: z.array(z.string()) });
const HistoryInput = z.strictObject({
  workId: z.string().regex(/^W-\d{1,9}$/).optional(),
  actor: z.string().min(1).max(100).optional(),
  types: z.array(z.string().min(1).max(64)).max(30).optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  before: z.number().int().min(1).optional(),
  limit: z.number().int().min(1).max(500).default(100),
});
const Metrics = z.object({
  counts: z.record(z.string(), z.number().int()),
  throughputPerDay: z.array(z.object({ day: z.string(), done: z.number().int() })),
  medianReadyToDoneSeconds: z.number().nullable(),
  verifyPassRate: z.number().nullable(),
  leaseExpiryRate: z.number().nullable(),
  agentsActiveLastHour: z.number().int(),
});

export const ONLINE_WITHIN_MS = 120_000;
const ACTIVITY_DEFAULT = 50;
const ACTIVITY_MAX = 200;
const base = { group: 'board', auth: 'bearer-or-session', project: 'required', rateHeaders: true, bodyKind: 'none', rate: 'read' } as const;
const eventView = (e: EventRecord) => ({ seq: e.seq, type: e.type, actor: e.actor, workId: e.workId, at: new Date(e.at).toISOString(), data: e.data });

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
        return {
          status: 200,
          body: {
            projectId: call.boardId,
            name: ctx.project!.name,
            version: record.version,
            lastSeq: record.lastSeq,
            counts: countsByState(board),
            chainHead: priorityChain(board, 'ready', 10).map((i) => ({ workId: i.workId, title: i.title, priority: i.priority })),
            leases: liveLeases(board).map((i) => ({ workId: i.workId, holder: i.life.lease!.holder, purpose: i.life.lease!.purpose, fencingToken: i.life.lease!.fencingToken, expiresAt: new Date(i.life.lease!.expiresAt).toISOString() })),
            awaitingVerification: [...chain(board, 'awaiting_verify')].map((i) => i.workId),
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
        const limit = intInRange(query.limit, 1, ACTIVITY_MAX, ACTIVITY_DEFAULT);
        if (query.before === '0') throw new AppError('INVALID_CURSOR', 'before must be a seq of at least 1.');
        await call.actor.syncLog();
        const filter = query.before ? { boardId: call.boardId, seq: { $lt: Number(query.before) } } : { boardId: call.boardId };
        const events = await store.events.find(filter, { sort: [['seq', -1]], limit });
        return { status: 200, body: { events: events.map(eventView), nextBefore: events.length === limit ? events.at(-1)!.seq : null } };
      },
    }),
    defineRoute<z.infer<typeof HistoryInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/history/query',
      summary: 'Filter the event log by work id, actor, types and time range, newest first, within the plan’s history retention (viewer).',
      bodyKind: 'json',
      body: HistoryInput,
      errors: ['ROLE_REQUIRED'],
      responses: { 200: { description: 'Matching events, newest first.', schema: z.object({ events: z.array(z.object({}).loose()), nextBefore: z.number().int().nullable() }) } },
      async handler({ ctx, body }) {
        const call = boards.enter(ctx, 'viewer', 'history', body.workId);
        const oldest = historySince(ctx.project!.plan, ctx.now);
        const from = Math.max(oldest, body.from ? Date.parse(body.from) : oldest);
        const to = body.to ? Date.parse(body.to) : ctx.now;
        await call.actor.syncLog();
        const events = await store.events.find(
          {
            boardId: call.boardId,
            at: { $gte: from, $lte: to },
            ...(body.before ? { seq: { $lt: body.before } } : {}),
            ...(body.workId ? { workId: body.workId } : {}),
            ...(body.actor ? { actor: body.actor } : {}),
            ...(body.types ? { type: { $in: body.types } } : {}),
          },
          { sort: [['seq', -1]], limit: body.limit },
        );
        return { status: 200, body: { events: events.map(eventView), nextBefore: events.length === body.limit ? events.at(-1)!.seq : null } };
      },
    }),
    defineRoute<z.infer<typeof HeartbeatInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/status/heartbeat',
      summary: `Record presence (member): status, note, the item worked on. An agent is online when seen within ${ONLINE_WITHIN_MS / 1000} s.`,
      description: 'Draws on the request budget only, like the claim/lease lifecycle.',
      bodyKind: 'json',
      body: HeartbeatInput,
      rate: 'lifecycle',
      errors: ['ROLE_REQUIRED'],
      responses: { 200: { description: 'Recorded.', schema: z.object({ principal: z.string(), seenAt: z.string() }) } },
      async handler({ ctx, body }) {
        const call = boards.enter(ctx, 'member', 'status', body.workId);
        const id = `${call.boardId}|${call.principal}`;
        const fields = { status: body.status, note: body.note, workId: body.workId ?? null, seenAt: ctx.now };
        const existing = await store.presence.get(id);
        if (!existing || !(await store.presence.update(id, existing.version, fields))) {
          await store.presence.insert({ _id: id, version: 1, boardId: call.boardId, principal: call.principal, ...fields }).catch(async () => {
            const raced = await store.presence.get(id);
            if (raced) await store.presence.update(id, raced.version, fields);
          });
        }
        return { status: 200, body: { principal: call.principal, seenAt: new Date(ctx.now).toISOString() } };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/agents',
      summary: 'The roster: every agent seen or holding a lease, with last seen, online flag and leases held (viewer).',
      errors: ['ROLE_REQUIRED'],
      responses: { 200: { description: 'Agents, most recently seen first.', schema: z.object({ agents: z.array(Agent) }) } },
      async handler({ ctx }) {
        const call = boards.enter(ctx, 'viewer', 'status');
        const [{ board }, seen] = await Promise.all([call.actor.read(), store.presence.find({ boardId: call.boardId }, { sort: [['seenAt', -1]], limit: 1000 })]);
        const leases = new Map<string, string[]>();
        for (const item of liveLeases(board)) leases.set(item.life.lease!.holder, [...(leases.get(item.life.lease!.holder) ?? []), item.workId]);
        const agents = seen.map((p) => ({ principal: p.principal, status: p.status, note: p.note, workId: p.workId, lastSeenAt: new Date(p.seenAt).toISOString(), online: ctx.now - p.seenAt < ONLINE_WITHIN_MS, leases: leases.get(p.principal) ?? [] }));
        for (const [principal, held] of leases) {
          if (!agents.some((a) => a.principal === principal)) agents.push({ principal, status: null, note: null, workId: null, lastSeenAt: null, online: false, leases: held } as never);
        }
        return { status: 200, body: { agents } };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/metrics',
      summary: 'Counts by state, throughput per day, median ready-to-done time, verify pass rate, lease expiry rate, agents active in the last hour (viewer).',
      description: 'Running aggregates kept with the board (folded from each commit, never read back from the log), over the plan’s history retention; the median is within about 9%.',
      errors: ['ROLE_REQUIRED'],
      responses: { 200: { description: 'The metrics.', schema: Metrics } },
      async handler({ ctx }) {
        const call = boards.enter(ctx, 'viewer', 'history');
        const { board, record } = await call.actor.read();
        return { status: 200, body: { counts: countsByState(board), ...metricsOf(record.stats as BoardStats | undefined, ctx.now, historySince(ctx.project!.plan, ctx.now)) } };
      },
    }),
  ];
}
