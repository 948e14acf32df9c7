// GET /api/admin/abuse: who is pushing against the service in the last hour. Addresses and
// principals ranked by refusals (401, 403, 429), addresses by sign-ups and anonymous boards made,
// principals by shouts posted and sockets closed for spending their message budget. Read from the
// ten-minute usage buckets (src/admin/usage.ts), which only such signals create: six small index
// ranges, each capped. The accounts among the principals come with their addresses.
import type { Store, UsageRecord } from '../../store/ports/store.js';
import { accountIdOf, namedAccounts } from './named-accounts.js';
import { BUCKET_MS, bucketOf } from './usage.js';

/** Buckets read: the one under way and the five before it (50 to 60 minutes). */
const BUCKETS = 6;
/** Rows read per bucket and scope at most; beyond it the answer says it is partial. */
const MAX_ROWS_PER_BUCKET = 5_000;

export interface Ranked {
  key: string;
  count: number;
  detail: Record<string, number>;
}

function rank(rows: readonly UsageRecord[], counters: readonly string[], limit: number): Ranked[] {
  const totals = new Map<string, Record<string, number>>();
  for (const row of rows) {
    const t = totals.get(row.key) ?? totals.set(row.key, {}).get(row.key)!;
    for (const c of counters) if (row.counts[c]) t[c] = (t[c] ?? 0) + row.counts[c]!;
  }
  return [...totals.entries()]
    .map(([key, detail]) => ({ key, detail, count: Object.values(detail).reduce((a, b) => a + b, 0) }))
    .filter((r) => r.count > 0)
    .sort((a, b) => b.count - a.count || a.key.localeCompare(b.key))
    .slice(0, limit);
}

const REFUSALS = ['r401', 'r403', 'r429'] as const;

export async function abuseSignals(store: Pick<Store, 'usage' | 'accounts'>, now: number, limit: number) {
  const buckets = Array.from({ length: BUCKETS }, (_, i) => bucketOf(now - i * BUCKET_MS));
  let partial = false;
  const read = async (scope: 'address' | 'principal') => {
    const pages = await Promise.all(
      buckets.map((day) => store.usage.find({ day, scope }, { limit: MAX_ROWS_PER_BUCKET })),
    );
    if (pages.some((p) => p.length >= MAX_ROWS_PER_BUCKET)) partial = true;
    return pages.flat();
  };
  const [addresses, principals] = await Promise.all([read('address'), read('principal')]);
  const rename = (r: Ranked): Ranked => ({
    ...r,
    detail: Object.fromEntries(Object.entries(r.detail).map(([k, v]) => [/^r\d{3}$/.test(k) ? k.slice(1) : k, v])),
  });
  const ranked = {
    refusals: {
      addresses: rank(addresses, REFUSALS, limit).map(rename),
      principals: rank(principals, REFUSALS, limit).map(rename),
    },
    signupBursts: rank(addresses, ['signups'], limit),
    anonymousBoardBursts: rank(addresses, ['anonBoards'], limit),
    shoutFloods: rank(principals, ['shouts'], limit),
    socketBudgetClosures: rank(principals, ['socketClosures'], limit),
  };
  const named = [ranked.refusals.principals, ranked.shoutFloods, ranked.socketBudgetClosures].flat();
  return {
    window: {
      from: new Date(Math.floor(now / BUCKET_MS) * BUCKET_MS - (BUCKETS - 1) * BUCKET_MS).toISOString(),
      to: new Date(now).toISOString(),
    },
    partial,
    ...ranked,
    accounts: await namedAccounts(
      store,
      named.map((r) => accountIdOf(r.key)),
    ),
  };
}
