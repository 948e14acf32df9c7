// Operator routes: watching the service (DOMAIN.md "Operators"). Rules live in src/admin/; these only bind them.
import { z } from 'zod';
import { codebase } from '../admin/codebase.js';
import { abuseSignals } from '../admin/abuse.js';
import { auditPage } from '../admin/audit-log.js';
import { accountCost, activeBoardsOn, boardCost, WINDOW_DAYS } from '../admin/costmodel.js';
import { durability } from '../admin/durability.js';
import { platformMetrics } from '../admin/platform.js';
import { dayOf } from '../admin/usage.js';
import { columnsOf, gapsIn, SampleColumns } from '../admin/node-history.js';
import { FIGURES_EVERY_MS, HISTORY_MS, NodeFigures } from '../admin/utilization.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import { adminBase, AuditRow, NamedAccounts } from './admin-shared.js';

const CodebaseResponse = z.object({
  name: z.string(),
  version: z.string(),
  commit: z.string().nullable(),
  node: z.string(),
  engines: z.record(z.string(), z.string().nullable()),
  store: z.enum(['embedded', 'mongo']),
  bus: z.enum(['local', 'redis']),
  nodeId: z.string(),
  startedAt: z.string(),
  configuration: z.record(z.string(), z.unknown()),
});

const Id = z.string().regex(/^[\w-]{1,64}$/, 'an id: 1 to 64 letters, digits, "-" or "_"');
const Limit = z.coerce.number().int().min(1).max(200).default(50);
const Time = z.iso.datetime({ offset: true });

const UtilizationResponse = z.object({
  nodes: z.array(z.object({ nodeId: z.string(), self: z.boolean(), heardAt: z.string(), figures: NodeFigures })),
});
const HistoryQuery = z.strictObject({
  minutes: z.coerce
    .number()
    .int()
    .min(1)
    .max(HISTORY_MS / 60_000)
    .default(HISTORY_MS / 60_000)
    .describe('How far back: samples that ended in the last this many minutes.'),
});
const Gap = z.object({ from: z.number(), to: z.number() });
const HistoryResponse = z.object({
  everyMs: z.number().describe('How often each node takes a sample.'),
  nodes: z.array(
    z.object({
      nodeId: z.string(),
      self: z.boolean(),
      heardAt: z.string(),
      samples: SampleColumns,
      gaps: z.array(Gap).describe('Where no sample covers the time between two held ones (epoch ms).'),
    }),
  ),
});
const MetricsQuery = z.strictObject({
  days: z.coerce.number().int().min(1).max(90).default(30).describe('Days of the per-day series, today included.'),
});
const CostQuery = z.strictObject({
  accountId: Id.optional().describe('One account: its own requests and socket time, and every board it owns.'),
  projectId: Id.optional().describe('One board.'),
  day: z.iso
    .date()
    .optional()
    .describe('Without accountId or projectId: the boards active that day (UTC; default today), by board id.'),
  cursor: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('The previous page’s nextCursor (a board id; anything else is 400 INVALID_CURSOR).'),
  limit: Limit,
});
const AuditQuery = z.strictObject({
  actor: z.string().min(1).max(200).optional().describe('A principal: user:<id>, agent:<id>, system:…'),
  target: z
    .string()
    .min(1)
    .max(300)
    .optional()
    .describe('What an operator action was done to: account:<id>, board:<id>, token:<id>, …'),
  projectId: Id.optional(),
  action: z
    .string()
    .regex(
      /^[\w.:-]{1,100}\*?$/,
      'an action (letters, digits, ".", ":", "-", "_"), optionally ending with * for a prefix',
    )
    .optional(),
  from: Time.optional().describe('Rows at or after this time.'),
  to: Time.optional().describe('Rows at or before this time.'),
  cursor: z.string().min(1).max(400).optional(),
  limit: Limit,
});
const AbuseQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(100).default(20) });
const Ranked = z.array(z.object({ key: z.string(), count: z.number(), detail: z.record(z.string(), z.number()) }));
const Loose = z.record(z.string(), z.unknown());

const iso = (ms: number): string => new Date(ms).toISOString();
const get = { ...adminBase, method: 'get', bodyKind: 'none' } as const;

/** What the admin-watch routes use of the server's dependencies. */
export type AdminWatchDeps = Pick<RouteDeps, 'config' | 'store' | 'watch' | 'mailer' | 'clock' | 'busHealth'>;

export function adminWatchRoutes(deps: AdminWatchDeps): Route[] {
  const startedAt = deps.clock();
  const { store, watch, config } = deps;
  /** This node's counters go out before a figure is read from the store, so what it counted shows at once. */
  const flushed = () => watch.usage.flush().catch(() => undefined);
  return [
    defineRoute({
      ...get,
      path: '/api/admin/codebase',
      summary:
        'What this node runs: build, Node and engine versions, store and bus, node id, start time, and the configuration with secrets redacted.',
      errors: [],
      responses: { 200: { description: 'The running build.', schema: CodebaseResponse } },
      handler: () => ({ status: 200, body: codebase(deps.config, startedAt) }),
    }),
    defineRoute({
      ...get,
      path: '/api/admin/utilization',
      summary:
        'Per node: boards active, sockets, requests and commits per minute, lease timers, mailbox depths, event-loop delay, memory.',
      description:
        'Each node tells the others its figures through the bus every 5 s; this lists the nodes heard in the last 15 s, the answering one first (its figures taken now). Without Redis, one node. `figures.sample` is the node’s last 5 s sample (the hour of them: GET /api/admin/utilization/history).',
      errors: [],
      responses: { 200: { description: 'The nodes.', schema: UtilizationResponse } },
      handler: () => ({
        status: 200,
        body: { nodes: watch.utilization.nodes().map((n) => ({ ...n, heardAt: iso(n.heardAt) })) },
      }),
    }),
    defineRoute<undefined, z.infer<typeof HistoryQuery>>({
      ...get,
      path: '/api/admin/utilization/history',
      summary:
        'Per node, the last hour at 5 s resolution: requests and commits per sample, p99 request latency, event-loop delay (p99 and max), memory.',
      description:
        'Each node samples itself every 5 s and sends the sample with its figures; every node keeps an hour per node it hears (720 samples) and asks a node for what it missed when it starts or was cut off. Samples are columns, oldest first; times are epoch milliseconds on the sampling node’s clock, `from` where a sample’s interval began. `gaps` says where no node could fill in. The answering node first, the others by node id (those heard in the last hour).',
      query: HistoryQuery,
      errors: [],
      responses: { 200: { description: 'Each node’s samples.', schema: HistoryResponse } },
      handler: ({ query }) => ({
        status: 200,
        body: {
          everyMs: FIGURES_EVERY_MS,
          nodes: watch.utilization.history.window(query.minutes * 60_000).map((n) => ({
            nodeId: n.nodeId,
            self: n.self,
            heardAt: iso(n.heardAt),
            samples: columnsOf(n.samples),
            gaps: gapsIn(n.samples),
          })),
        },
      }),
    }),
    defineRoute<undefined, z.infer<typeof MetricsQuery>>({
      ...get,
      path: '/api/admin/metrics',
      summary:
        'The platform: sign-ups, active accounts, boards and agents per day, requests and events, Pro boards, monthly revenue, churn.',
      description:
        'Per-day figures come from the usage counters (each node writes its own every 5 s); revenue is priced at REVENUE_PRO_MONTHLY_USD and REVENUE_PRO_YEARLY_USD (null when either is unset). A subscription on a price that is neither STRIPE_PRICE_MONTHLY nor STRIPE_PRICE_YEARLY is counted apart (subscriptions.unknownPrice) and adds nothing to the revenue.',
      query: MetricsQuery,
      errors: [],
      responses: { 200: { description: 'Per day, newest first, and billing.', schema: Loose } },
      async handler({ ctx, query }) {
        await flushed();
        return { status: 200, body: await platformMetrics(store, config, ctx.now, query.days) };
      },
    }),
    defineRoute<undefined, z.infer<typeof CostQuery>>({
      ...get,
      path: '/api/admin/costmodel',
      summary: `Per account and board: stored bytes (estimated), events, requests and socket-minutes over ${WINDOW_DAYS} days, priced at the COST_* unit costs, beside the plan's revenue.`,
      description:
        'With accountId: that account and the boards it owns. With projectId: that board. With neither: the boards active on `day`, by board id, paged with cursor. A board paying on a price the service does not name has revenue.monthlyUsd null (not guessed), as when the REVENUE_PRO_* price is unset.',
      query: CostQuery,
      errors: ['NOT_FOUND', 'INVALID_CURSOR'],
      responses: { 200: { description: 'Costs in US dollars.', schema: Loose } },
      async handler({ ctx, query }) {
        await flushed();
        const { costs } = config;
        if (query.accountId !== undefined)
          return {
            status: 200,
            body: {
              unitCosts: costs,
              windowDays: WINDOW_DAYS,
              account: await accountCost(store, costs, query.accountId, ctx.now),
            },
          };
        if (query.projectId !== undefined)
          return {
            status: 200,
            body: {
              unitCosts: costs,
              windowDays: WINDOW_DAYS,
              board: await boardCost(store, costs, query.projectId, ctx.now, true),
            },
          };
        const page = await activeBoardsOn(
          store,
          costs,
          query.day ?? dayOf(ctx.now),
          query.cursor,
          query.limit,
          ctx.now,
        );
        return { status: 200, body: { unitCosts: costs, windowDays: WINDOW_DAYS, ...page } };
      },
    }),
    defineRoute({
      ...get,
      path: '/api/admin/durability',
      summary:
        'Store health (ping, commit latency, conflicts and failures, disk space, replication on MongoDB), the last retention purge, the mail queue, the bus, and the alerts they raise.',
      description:
        'Commits, the purge and the mail figures are this node’s. `alerts` (critical first) names what needs an operator now: the store unreachable or slow, a commit failure in the last 15 minutes, the disk over 90% full, the bus down, a mail backlog, usage counts lost, a node with a slow event loop or large memory (src/admin/alerts.ts).',
      errors: [],
      responses: { 200: { description: 'Health.', schema: Loose } },
      async handler() {
        const report = await durability({
          config,
          store,
          commits: watch.commits,
          lastPurge: () => watch.lastPurge,
          mail: () => deps.mailer.stats?.(),
          bus: deps.busHealth,
          peers: () => watch.utilization.nodes().length - 1,
          usage: () => ({
            pendingRows: watch.usage.pendingRows,
            dropped: watch.usage.dropped,
            lastFlush: watch.usage.lastFlush,
          }),
          nodes: () => watch.utilization.nodes(),
          clock: deps.clock,
        });
        return { status: 200, body: report };
      },
    }),
    defineRoute<undefined, z.infer<typeof AuditQuery>>({
      ...get,
      path: '/api/admin/audit',
      summary:
        'Every audit row, newest first, filtered by actor, target, board, action (a trailing * matches a prefix) and time.',
      description:
        'At most 2,000 rows are examined per page: with a filter that matches rarely, a page may hold fewer than `limit` rows; follow nextCursor until it is null.',
      query: AuditQuery,
      errors: ['INVALID_CURSOR'],
      responses: {
        200: {
          description: 'A page of rows.',
          schema: z.object({
            rows: z.array(AuditRow),
            nextCursor: z.string().nullable(),
            scanned: z.number(),
            accounts: NamedAccounts,
          }),
        },
      },
      async handler({ query }) {
        const page = await auditPage(store, {
          ...query,
          from: query.from === undefined ? undefined : Date.parse(query.from),
          to: query.to === undefined ? undefined : Date.parse(query.to),
        });
        return { status: 200, body: page };
      },
    }),
    defineRoute<undefined, z.infer<typeof AbuseQuery>>({
      ...get,
      path: '/api/admin/abuse',
      summary:
        'The last hour: addresses and principals ranked by refusals (401, 403, 429), sign-up and anonymous-board bursts, shout floods, socket budget closures.',
      description: 'From ten-minute counters (this one and the five before); each node writes its own every 5 s.',
      query: AbuseQuery,
      errors: [],
      responses: {
        200: {
          description: 'Ranked signals.',
          schema: z.object({
            window: z.object({ from: z.string(), to: z.string() }),
            partial: z.boolean(),
            refusals: z.object({ addresses: Ranked, principals: Ranked }),
            signupBursts: Ranked,
            anonymousBoardBursts: Ranked,
            shoutFloods: Ranked,
            socketBudgetClosures: Ranked,
            accounts: NamedAccounts,
          }),
        },
      },
      async handler({ ctx, query }) {
        await flushed();
        return { status: 200, body: await abuseSignals(store, ctx.now, query.limit) };
      },
    }),
  ];
}
