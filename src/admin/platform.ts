// GET /api/admin/metrics: the platform as a business. Per day, from the platform usage row (one
// direct read per day): sign-ups, anonymous boards, accounts, boards and agents active, requests,
// refusals, commits and events. From billing records through the status index: Pro boards,
// subscriptions by interval (and those at a price the service does not name, apart), monthly
// revenue at the configured prices (src/billing/plan.ts monthlyRevenue), and churn over 30 days.
import type { Config } from '../config.js';
import { billingPlan, monthlyRevenue } from '../billing/plan.js';
import { DAY_MS } from '../plans.js';
import type { Store } from '../../store/ports/store.js';
import { lastDays, PLATFORM_KEY, usageId } from './usage.js';

const LIVE_STATUSES = ['active', 'trialing', 'past_due'];
const CHURN_WINDOW_MS = 30 * DAY_MS;

export interface PlatformDay {
  day: string;
  signups: number;
  anonymousBoards: number;
  activeAccounts: number;
  activeBoards: number;
  activeAgents: number;
  requests: number;
  refusals: number;
  commits: number;
  events: number;
  socketMinutes: number;
}

export async function platformMetrics(
  store: Pick<Store, 'usage' | 'billing' | 'projects'>,
  config: Pick<Config, 'costs'>,
  now: number,
  days: number,
) {
  const dayNames = lastDays(now, days);
  const rows = await store.usage.find({ _id: { $in: dayNames.map((d) => usageId(d, 'platform', PLATFORM_KEY)) } });
  const byDay = new Map(rows.map((r) => [r.day, r.counts]));
  const series: PlatformDay[] = dayNames.reverse().map((day) => {
    const c = byDay.get(day) ?? {};
    const n = (k: string) => c[k] ?? 0;
    return {
      day,
      signups: n('signups'),
      anonymousBoards: n('anonBoards'),
      activeAccounts: n('activeAccounts'),
      activeBoards: n('activeBoards'),
      activeAgents: n('activeAgents'),
      requests: n('requests'),
      refusals: n('r401') + n('r403') + n('r429'),
      commits: n('commits'),
      events: n('events'),
      socketMinutes: Math.round((n('socketSeconds') / 60) * 100) / 100,
    };
  });

  const live = await store.billing.select({ status: { $in: LIVE_STATUSES } }, ['status', 'interval', 'pastDueSince']);
  const paying = live.filter((r) => billingPlan(r, now) === 'pro');
  const monthly = paying.filter((r) => r.interval === 'month').length;
  const yearly = paying.filter((r) => r.interval === 'year').length;
  // On a price the service does not name: counted apart, their revenue not guessed.
  const unknownPrice = paying.filter((r) => r.interval === null).length;
  const { proMonthly, proYearly } = config.costs;
  const revenue =
    proMonthly === null || proYearly === null
      ? null
      : round2(paying.reduce((sum, r) => sum + (monthlyRevenue(r, config.costs, now) ?? 0), 0));
  const canceled = await store.billing.count({ status: 'canceled', changedAt: { $gte: now - CHURN_WINDOW_MS } });
  // Complimentary Pro plans in force (the compUntil index), those not also paid for.
  const paid = new Set(paying.map((r) => r._id));
  const complimentary = (await store.projects.select({ compUntil: { $gt: now } }, ['compPlan'])).filter(
    (p) => p.compPlan === 'pro' && !paid.has(p._id),
  ).length;
  return {
    days: series,
    billing: {
      /** Boards Pro through a subscription or a complimentary plan. */
      proBoards: paying.length + complimentary,
      complimentary,
      subscriptions: {
        month: monthly,
        year: yearly,
        /** Paying on a price that is neither REVENUE's monthly nor yearly one: in no interval, not in the revenue. */
        unknownPrice,
        pastDue: live.filter((r) => r.status === 'past_due').length,
      },
      monthlyRevenueUsd: revenue,
      churn: {
        canceledLast30Days: canceled,
        rate: canceled + paying.length === 0 ? 0 : round4(canceled / (canceled + paying.length)),
      },
    },
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const round4 = (n: number) => Math.round(n * 10_000) / 10_000;
