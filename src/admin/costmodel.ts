// GET /api/admin/costmodel: what an account or board costs to serve over the last 30 days, priced
// at the configured unit costs (COST_*), beside what its plan brings in. Requests, events and
// socket time come from the usage counters (30 direct reads per subject); stored bytes are an
// estimate from the board's header (items per state, last seq) and the oldest event kept (one
// indexed read), never from reading the board.
import type { Config } from '../config.js';
import { billingPlan, complimentaryPlan, monthlyRevenue } from '../billing/plan.js';
import { AppError } from '../errors/app-error.js';
import type { ProjectRecord, Store, UsageRecord } from '../../store/ports/store.js';
import { lastDays, sumCounts, usageId, type UsageScope } from './usage.js';

export const WINDOW_DAYS = 30;
/** What an item and an event take in the store, roughly (document, indexes, overhead). */
export const EST_ITEM_BYTES = 1_500;
export const EST_EVENT_BYTES = 400;

type Ports = Pick<Store, 'usage' | 'boards' | 'events' | 'projects' | 'accounts' | 'billing'>;

export interface Usage30 {
  requests: number;
  refusals: number;
  events: number;
  commits: number;
  socketMinutes: number;
}

export interface Priced {
  storageUsd: number;
  eventsUsd: number;
  requestsUsd: number;
  socketsUsd: number;
  totalUsd: number;
}

async function usage30(
  store: Pick<Store, 'usage'>,
  scope: UsageScope,
  key: string,
  now: number,
): Promise<{ usage: Usage30; socketSeconds: number }> {
  const rows: UsageRecord[] = await store.usage.find({
    _id: { $in: lastDays(now, WINDOW_DAYS).map((d) => usageId(d, scope, key)) },
  });
  const c = sumCounts(rows);
  const n = (k: string) => c[k] ?? 0;
  return {
    usage: {
      requests: n('requests'),
      refusals: n('r401') + n('r403') + n('r429'),
      events: n('events'),
      commits: n('commits'),
      socketMinutes: Math.round((n('socketSeconds') / 60) * 100) / 100,
    },
    socketSeconds: n('socketSeconds'),
  };
}

function price(costs: Config['costs'], storedBytes: number, usage: Usage30, socketSeconds: number): Priced {
  const storageUsd = (storedBytes / 1e9) * costs.storedGbMonth;
  const eventsUsd = (usage.events / 1e6) * costs.millionEvents;
  const requestsUsd = (usage.requests / 1e6) * costs.millionRequests;
  const socketsUsd = (socketSeconds / 3600 / 1000) * costs.thousandSocketHours;
  const r = (n: number) => Math.round(n * 1e8) / 1e8;
  return {
    storageUsd: r(storageUsd),
    eventsUsd: r(eventsUsd),
    requestsUsd: r(requestsUsd),
    socketsUsd: r(socketsUsd),
    totalUsd: r(storageUsd + eventsUsd + requestsUsd + socketsUsd),
  };
}

/** What a board holds, estimated: items from the header's counts, events from the last seq and the oldest kept. */
async function storedEstimate(
  store: Pick<Store, 'boards' | 'events'>,
  boardId: string,
): Promise<{ items: number; events: number; bytes: number }> {
  const [header] = await store.boards.select({ _id: boardId }, ['lastSeq', 'counts']);
  if (!header) return { items: 0, events: 0, bytes: 0 };
  const items = Object.values(header.counts ?? {}).reduce((a, b) => a + b, 0);
  const [oldest] = await store.events.select({ boardId }, ['seq'], { sort: [['seq', 1]], limit: 1 });
  const events = oldest ? Math.max(0, header.lastSeq - oldest.seq + 1) : 0;
  return { items, events, bytes: items * EST_ITEM_BYTES + events * EST_EVENT_BYTES };
}

/**
 * The plan's monthly revenue from the board's billing record (monthlyRevenue: null when it cannot
 * be told, a price the service does not name or one not configured); a complimentary plan brings none.
 */
async function revenueOf(
  store: Pick<Store, 'billing'>,
  costs: Config['costs'],
  project: ProjectRecord | null,
  boardId: string,
  now: number,
) {
  const record = await store.billing.get(boardId);
  const complimentary = project !== null && complimentaryPlan(project, now) === 'pro';
  if (!record || billingPlan(record, now) !== 'pro')
    return { plan: complimentary ? ('pro' as const) : ('free' as const), complimentary, interval: null, monthlyUsd: 0 };
  const monthly = monthlyRevenue(record, costs, now);
  return {
    plan: 'pro' as const,
    complimentary,
    interval: record.interval,
    monthlyUsd: monthly === null ? null : Math.round(monthly * 100) / 100,
  };
}

/** One board's figures; `required`: an unknown board is 404 NOT_FOUND (else it is listed as gone: its counters outlive it). */
export async function boardCost(store: Ports, costs: Config['costs'], boardId: string, now: number, required = false) {
  const project = await store.projects.get(boardId);
  if (!project && required) throw new AppError('NOT_FOUND', 'No board has that id.');
  const [{ usage, socketSeconds }, stored, revenue] = await Promise.all([
    usage30(store, 'board', boardId, now),
    storedEstimate(store, boardId),
    revenueOf(store, costs, project, boardId, now),
  ]);
  const cost = price(costs, stored.bytes, usage, socketSeconds);
  return {
    boardId,
    name: project?.name ?? null,
    ownerId: project?.ownerId ?? null,
    exists: project !== null,
    stored: { items: stored.items, events: stored.events, estimatedBytes: stored.bytes },
    usage,
    cost,
    revenue: {
      ...revenue,
      monthlyMarginUsd:
        revenue.monthlyUsd === null ? null : Math.round((revenue.monthlyUsd - cost.totalUsd) * 1e8) / 1e8,
    },
  };
}

const MAX_BOARDS_PER_ACCOUNT = 200;

/** One account: its own requests and socket time, and each board it owns. */
export async function accountCost(store: Ports, costs: Config['costs'], accountId: string, now: number) {
  const account = await store.accounts.get(accountId);
  if (!account) throw new AppError('NOT_FOUND', 'No account has that id.');
  const owned = await store.projects.select({ ownerId: accountId }, ['name'], { limit: MAX_BOARDS_PER_ACCOUNT });
  const [{ usage, socketSeconds }, boards] = await Promise.all([
    usage30(store, 'account', accountId, now),
    Promise.all(owned.map((p) => boardCost(store, costs, p._id, now))),
  ]);
  const own = price(costs, 0, { ...usage, events: 0 }, socketSeconds);
  const sum = (f: (b: (typeof boards)[number]) => number) => boards.reduce((a, b) => a + f(b), 0);
  const totalUsd = Math.round((own.totalUsd + sum((b) => b.cost.totalUsd)) * 1e8) / 1e8;
  const revenues = boards.map((b) => b.revenue.monthlyUsd);
  const revenueUsd = revenues.some((r) => r === null)
    ? null
    : Math.round(revenues.reduce((a: number, b) => a + (b ?? 0), 0) * 100) / 100;
  return {
    accountId,
    email: account.email,
    usage,
    requestsAndSockets: own,
    boards,
    totalUsd,
    monthlyRevenueUsd: revenueUsd,
  };
}

/** Boards with a usage row on `day`, by board id after `cursor` (a page of direct reads: never a scan). */
export async function activeBoardsOn(
  store: Ports,
  costs: Config['costs'],
  day: string,
  cursor: string | undefined,
  limit: number,
  now: number,
) {
  if (cursor !== undefined && !/^[\w-]{1,64}$/.test(cursor))
    throw new AppError('INVALID_CURSOR', 'Pass nextCursor exactly as received, or omit it.');
  const prefix = usageId(day, 'board', '');
  const rows = await store.usage.select(
    { _id: { $gt: `${prefix}${cursor ?? ''}`, $lt: `${prefix.slice(0, -1)};` } },
    ['key'],
    { sort: [['_id', 1]], limit: limit + 1 },
  );
  const page = rows.slice(0, limit);
  const boards = await Promise.all(page.map((r) => boardCost(store, costs, r.key, now)));
  return { day, boards, nextCursor: rows.length > limit ? page.at(-1)!.key : null };
}
