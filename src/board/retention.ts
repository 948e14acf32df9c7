// Retention: a board's events, shouts, presence, audit rows and restore points older than its
// plan's history retention (restore points of a Free board, also one that dropped to Free, after
// a day and beyond its newest 20: src/board/restore-points.ts pointsSince, pointsKept), and expired sessions, link tokens and device-flow grants, are deleted through
// index ranges (by board and seq or time, by expiry), so the work is proportional to what ages
// out, never a collection scan.
// Every node may run it; deleting what is already gone is harmless.
import { DAY_MS, historySince, PLANS } from '../plans.js';
import type { Store } from '../../store/ports/store.js';
import { dropPoints, pointsSince, trimPoints } from './restore-points.js';

export const PURGE_EVERY_MS = 10 * 60_000;
/** A device-flow grant is kept this long past its expiry, so a late poll still hears EXPIRED_TOKEN (src/accounts/device-flow.ts); then purged. */
export const DEVICE_GRANTS_KEPT_MS = 60 * 60_000;
const PROJECT_PAGE = 200;

export type RetentionPorts = Pick<
  Store,
  | 'projects'
  | 'events'
  | 'shouts'
  | 'presence'
  | 'audit'
  | 'restorePoints'
  | 'restorePointParts'
  | 'sessions'
  | 'linkTokens'
  | 'deviceGrants'
>;

export interface Purged {
  events: number;
  shouts: number;
  presence: number;
  audit: number;
  restorePoints: number;
  sessions: number;
  linkTokens: number;
  deviceGrants: number;
}

/** Deletes everything past its retention at `now`, and says how much. */
export async function purgeExpired(store: RetentionPorts, now: number): Promise<Purged> {
  const purged: Purged = {
    events: 0,
    shouts: 0,
    presence: 0,
    audit: 0,
    restorePoints: 0,
    sessions: 0,
    linkTokens: 0,
    deviceGrants: 0,
  };
  purged.sessions = await store.sessions.deleteMany({ expiresAt: { $lt: now } });
  purged.linkTokens = await store.linkTokens.deleteMany({ expiresAt: { $lt: now } });
  purged.deviceGrants = await store.deviceGrants.deleteMany({ expiresAt: { $lt: now - DEVICE_GRANTS_KEPT_MS } });
  for (let after = ''; ;) {
    const page = await store.projects.select({ _id: { $gt: after } }, ['plan'], {
      sort: [['_id', 1]],
      limit: PROJECT_PAGE,
    });
    for (const { _id: boardId, plan } of page) {
      const cutoff = historySince(plan, now);
      purged.events += await purgeLog(store, boardId, cutoff);
      purged.shouts += await store.shouts.deleteMany({ boardId, at: { $lt: cutoff } });
      purged.presence += await store.presence.deleteMany({ boardId, seenAt: { $lt: cutoff } });
      purged.audit += await store.audit.deleteMany({ projectId: boardId, at: { $lt: cutoff } });
      // A board that dropped to Free also keeps only Free's newest 20 from then on (at most 20 index
      // keys to skip); a Pro board's 500 are held at every point it keeps.
      purged.restorePoints += PLANS[plan].rewind
        ? await dropPoints(store, { boardId, capturedAt: { $lt: pointsSince(plan, now) } })
        : await trimPoints(store, boardId, plan, now);
    }
    if (page.length < PROJECT_PAGE) break;
    after = page.at(-1)!._id;
  }
  // Account-level audit rows belong to no board: they are kept as long as the longest plan keeps history.
  const longest = Math.max(...Object.values(PLANS).map((p) => p.historyRetentionDays));
  purged.audit += await store.audit.deleteMany({ projectId: null, at: { $lt: now - longest * DAY_MS } });
  return purged;
}

/**
 * Deletes a board's events older than `cutoff`. seq grows with time, so what ages out of the log is
 * a prefix of it: up to the first event kept, or, when none is, up to the newest event there was
 * before that was asked. The log is copied to while this runs (the first events of a new board
 * among them), and an event copied after the newest was read has a higher seq (copies land in seq
 * order): it is never in the range deleted.
 */
async function purgeLog(store: Pick<Store, 'events'>, boardId: string, cutoff: number): Promise<number> {
  const [newest] = await store.events.select({ boardId }, ['seq'], { sort: [['seq', -1]], limit: 1 });
  if (!newest) return 0;
  const [kept] = await store.events.select({ boardId, at: { $gte: cutoff } }, ['seq'], {
    sort: [['seq', 1]],
    limit: 1,
  });
  const end = Math.min(kept ? kept.seq : Infinity, newest.seq + 1);
  return end > 1 ? store.events.deleteMany({ boardId, seq: { $lt: end } }) : 0;
}

/** Purges a minute after start and then every PURGE_EVERY_MS; returns the stop. */
export function schedulePurges(
  store: RetentionPorts,
  clock: () => number,
  report: (purged: Purged | null, error?: unknown) => void,
): () => void {
  const run = () =>
    purgeExpired(store, clock()).then(
      (purged) => report(purged),
      (e: unknown) => report(null, e),
    );
  const first = setTimeout(run, 60_000);
  const every = setInterval(run, PURGE_EVERY_MS);
  first.unref();
  every.unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
