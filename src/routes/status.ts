// Board reads: the status snapshot and the activity log (newest first).
import { z } from 'zod';
import type { BoardStats } from '../../machines/board-stats.js';
import { boardMetrics, statsSince } from '../board/metrics.js';
import { ONLINE_WITHIN_MS, recordHeartbeat, rosterOf, seenOn } from '../board/presence.js';
import { lastActivityOf, statusJsonFor } from '../board/status.js';
import { lookAt } from '../board/feed/look.js';
import { eventView } from '../ws/board-view.js';
import { readLog } from '../board/log-reads.js';
import { RESOURCE_TOKEN_VIEW, rosterAsSeen } from '../board/visibility.js';
import { AppError } from '../errors/app-error.js';
import { defineRoute, JSON_CONTENT_TYPE, type Route } from '../http/route.js';
import { intInRange } from '../int-in-range.js';
import { historySince } from '../plans.js';
import type { RouteDeps } from './deps.js';
import { andThen, both } from '../../store/ports/maybe.js';

const ActivityQuery = z.object({
  before: z
    .string()
    .regex(/^\d{1,12}$/)
    .optional()
    .describe('A seq of at least 1 (0 is 400 INVALID_CURSOR): events older than it.'),
  limit: z.string().optional(),
});
export const Event = z.object({
  seq: z.number().int(),
  type: z.string(),
  actor: z.string(),
  workId: z.string().nullable(),
  at: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export const Status = z.object({
  projectId: z.string(),
  name: z.string(),
  version: z.number().int(),
  paused: z
    .boolean()
    .describe(
      'Whether the board is paused (PATCH /api/projects/{projectId} `paused`): claims and changes to the work graph answer 409 BOARD_PAUSED meanwhile.',
    ),
  pausedBy: z.string().nullable().describe('Who paused it (a principal); null while it runs.'),
  pausedAt: z.string().nullable().describe('When it was paused; null while it runs.'),
  lastSeq: z.number().int(),
  counts: z.record(z.string(), z.number().int()),
  chainHead: z.array(z.object({ workId: z.string(), title: z.string(), priority: z.number().int() })),
  leases: z.array(
    z.object({
      workId: z.string(),
      holder: z.string(),
      purpose: z.string(),
      fencingToken: z.number().int(),
      expiresAt: z.string(),
    }),
  ),
  awaitingVerification: z.array(z.string()),
  stalled: z.array(z.string()),
  retiredSpecLinks: z
    .array(z.object({ workId: z.string(), clauseId: z.string() }))
    .describe(
      'Items linking a retired spec clause (their `spec` names it), clause by clause: re-point them or reopen the clause.',
    ),
  agentsOnline: z
    .number()
    .int()
    .describe(`Agents that sent a heartbeat within the last ${ONLINE_WITHIN_MS / 1000} s.`),
  lastActivityAt: z
    .string()
    .nullable()
    .describe('When the newest event of the board’s log was appended (any accepted change); null before the first.'),
});

const HeartbeatInput = z.strictObject({
  status: z.enum(['idle', 'working', 'blocked', 'offline']).default('working'),
  note: z.string().max(500).default(''),
  workId: z
    .string()
    .regex(/^W-\d{1,9}$/)
    .optional(),
});
export const Agent = z.object({
  principal: z.string(),
  status: z.string().nullable(),
  note: z.string().nullable(),
  workId: z.string().nullable(),
  lastSeenAt: z.string().nullable(),
  online: z.boolean(),
  leases: z.array(z.string()),
});
const HistoryInput = z.strictObject({
  workId: z
    .string()
    .regex(/^W-\d{1,9}$/)
    .optional(),
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
  blindTests: z
    .object({ pass: z.number().int(), fail: z.number().int() })
    .describe('Doctrine blind tests taken over the same days, by result (POST /api/doctrine/{slug}/blind-test).'),
  days: z
    .array(
      z.object({
        day: z.string().describe('The UTC day, YYYY-MM-DD.'),
        done: z.number().int(),
        grants: z.number().int(),
        expiries: z.number().int(),
        verdicts: z.number().int(),
        passes: z.number().int(),
        readyToDoneSeconds: z
          .object({ median: z.number().nullable(), p90: z.number().nullable() })
          .describe('Of the items done that day (each within about 9%); null without any.'),
        verifyPassRate: z.number().nullable().describe('passes / verdicts; null without verdicts.'),
        leaseExpiryRate: z
          .number()
          .nullable()
          .describe(
            'expiries / grants that day (a lease granted the day before may expire on it); null without grants.',
          ),
        agentsActive: z.number().int().describe('The most agents active within one hour at any commit that day.'),
        counts: z
          .record(z.string(), z.number().int())
          .nullable()
          .describe(
            'Items per state at the day’s end: a day without a commit carries the day before’s; null before the first day that has them.',
          ),
      }),
    )
    .describe(
      'Every UTC day, oldest first and none skipped, from the first with stats within the retention through today: a day without activity reads as zeros and nulls.',
    ),
});

/** What a narrower credential's page of the log holds. */
const LOG_AS_SEEN = `${RESOURCE_TOKEN_VIEW} Its pages skip what it may not see, so one may hold fewer than \`limit\`: go on with \`nextBefore\` until it is null.`;

const ACTIVITY_DEFAULT = 50;
const ACTIVITY_MAX = 200;
const base = {
  group: 'board',
  auth: 'bearer-or-session',
  project: 'required',
  rateHeaders: true,
  bodyKind: 'none',
  rate: 'read',
} as const;

/** What the status routes use of the server's dependencies. */
export type StatusDeps = Pick<RouteDeps, 'store' | 'online' | 'boards' | 'notify'>;

export function statusRoutes(deps: StatusDeps): Route[] {
  const { boards, store } = deps;
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/status',
      summary:
        'The board at a glance: whether it is paused, counts by state, the head of the priority chain, active leases, items awaiting verification, stalled items, items linking retired spec clauses, agents online, last activity.',
      description: `Stalled items depend on a cancelled item and wait for an operator to re-point them. agentsOnline counts the agents that sent a heartbeat within ${ONLINE_WITHIN_MS / 1000} s; lastActivityAt is when the board last accepted a change (its newest event), null before the first. A resource token (of the status group) is shown the chain head, leases, items awaiting verification, stalled items and retired spec links of the items it sees, and its own leases; the counts whole.`,
      errors: ['ROLE_REQUIRED'],
      responses: { 200: { description: 'The snapshot.', schema: Status } },
      // Answered now when the board, the count and the last activity are all held (a fleet polling a board this node serves).
      handler({ ctx }) {
        const call = boards.enter(ctx, 'viewer', 'status');
        // A resource token is answered what it may see of the items (visibility.ts statusAsSeen).
        const { view } = lookAt(ctx.identity!, call.role, []);
        return andThen(both(call.actor.read(), deps.online.count(call.boardId, ctx.now)), ([committed, online]) =>
          andThen(lastActivityOf(store, call.boardId, committed), (lastActivityAt) => ({
            status: 200,
            contentType: JSON_CONTENT_TYPE,
            body: statusJsonFor(view, {
              projectId: call.boardId,
              name: ctx.project!.name,
              board: committed.board,
              record: committed.record,
              agentsOnline: online,
              lastActivityAt,
            }),
          })),
        );
      },
    }),
    defineRoute<undefined, z.infer<typeof ActivityQuery>>({
      ...base,
      method: 'get',
      path: '/api/activity',
      summary: 'The board’s event log, newest first; page with `before` = the last seq you saw.',
      description: `Every accepted change appends events with a per-board seq, strictly increasing with no gaps. limit 1..${ACTIVITY_MAX}, default ${ACTIVITY_DEFAULT}. ${LOG_AS_SEEN}`,
      query: ActivityQuery,
      errors: ['ROLE_REQUIRED', 'INVALID_CURSOR'],
      responses: {
        200: {
          description: 'Events, newest first.',
          schema: z.object({ events: z.array(Event), nextBefore: z.number().int().nullable() }),
        },
      },
      async handler({ ctx, query }) {
        const call = await boards.look(ctx, 'log');
        const limit = intInRange(query.limit, 1, ACTIVITY_MAX, ACTIVITY_DEFAULT);
        if (query.before === '0') throw new AppError('INVALID_CURSOR', 'before must be a seq of at least 1.');
        await call.actor.syncLog();
        const page = await readLog(store, call.boardId, call.view, {
          ...(query.before && { before: Number(query.before) }),
          limit,
        });
        return { status: 200, body: { events: page.events.map(eventView), nextBefore: page.nextBefore } };
      },
    }),
    defineRoute<z.infer<typeof HistoryInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/history/query',
      summary:
        'Filter the event log by work id, actor, types and time range, newest first, within the plan’s history retention (viewer).',
      description: LOG_AS_SEEN,
      bodyKind: 'json',
      body: HistoryInput,
      errors: ['ROLE_REQUIRED'],
      responses: {
        200: {
          description: 'Matching events, newest first.',
          schema: z.object({ events: z.array(z.object({}).loose()), nextBefore: z.number().int().nullable() }),
        },
      },
      async handler({ ctx, body }) {
        const call = await boards.look(ctx, 'log', body.workId);
        const oldest = historySince(ctx.project!.plan, ctx.now);
        const from = Math.max(oldest, body.from ? Date.parse(body.from) : oldest);
        const to = body.to ? Date.parse(body.to) : ctx.now;
        await call.actor.syncLog();
        const filter = {
          at: { $gte: from, $lte: to },
          ...(body.workId ? { workId: body.workId } : {}),
          ...(body.actor ? { actor: body.actor } : {}),
          ...(body.types ? { type: { $in: body.types } } : {}),
        };
        const page = await readLog(store, call.boardId, call.view, {
          filter,
          ...(body.before && { before: body.before }),
          limit: body.limit,
        });
        return { status: 200, body: { events: page.events.map(eventView), nextBefore: page.nextBefore } };
      },
    }),
    defineRoute<z.infer<typeof HeartbeatInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/status/heartbeat',
      summary: `Record presence (member): status, note, the item worked on. An agent is online when seen within ${ONLINE_WITHIN_MS / 1000} s.`,
      description:
        'Draws on the request budget only, like the claim/lease lifecycle. Pushed to the board’s sockets that watch the `presence` topic (not logged).',
      bodyKind: 'json',
      body: HeartbeatInput,
      rate: 'lifecycle',
      errors: ['ROLE_REQUIRED'],
      responses: { 200: { description: 'Recorded.', schema: z.object({ principal: z.string(), seenAt: z.string() }) } },
      async handler({ ctx, body }) {
        const call = boards.enter(ctx, 'member', 'status', body.workId);
        const beat = { status: body.status, note: body.note, workId: body.workId ?? null };
        await recordHeartbeat(store, call.boardId, call.principal, beat, ctx.now);
        deps.notify({
          kind: 'presence',
          boardId: call.boardId,
          presence: { principal: call.principal, ...beat, seenAt: ctx.now },
        });
        return { status: 200, body: { principal: call.principal, seenAt: new Date(ctx.now).toISOString() } };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/agents',
      summary: 'The roster: every agent seen or holding a lease, with last seen, online flag and leases held (viewer).',
      errors: ['ROLE_REQUIRED'],
      responses: {
        200: { description: 'Agents, most recently seen first.', schema: z.object({ agents: z.array(Agent) }) },
      },
      async handler({ ctx }) {
        const call = await boards.look(ctx, 'roster');
        const [{ board }, seen] = await Promise.all([call.actor.read(), seenOn(store, call.boardId)]);
        return { status: 200, body: { agents: rosterAsSeen(call.view, rosterOf(seen, board, ctx.now)) } };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/metrics',
      summary:
        'Counts by state, throughput per day, median ready-to-done time, verify pass rate, lease expiry rate, agents active in the last hour, doctrine blind tests passed and failed, and the same by day (viewer).',
      description:
        'Running aggregates kept with the board (folded from each commit, never read back from the log), over the plan’s history retention; the median is within about 9%. `days` is the series a chart draws: one entry per UTC day, contiguous, from the first day with stats within the retention through today.',
      errors: ['ROLE_REQUIRED'],
      responses: { 200: { description: 'The metrics.', schema: Metrics } },
      async handler({ ctx }) {
        const call = boards.enter(ctx, 'viewer', 'history');
        const { board, record } = await call.actor.read();
        const plan = ctx.project!.plan;
        const stats = await statsSince(
          store,
          call.boardId,
          record.stats as BoardStats | undefined,
          historySince(plan, ctx.now),
        );
        return { status: 200, body: boardMetrics(board, stats, plan, ctx.now) };
      },
    }),
  ];
}
