// The operators' usage counters (DOMAIN.md "Operators", Watching): each routed response, board
// commit and socket adds to counters in memory (a few map operations), and every few seconds the
// increments go to the `usage` collection, one store command per row touched (the port's `add`).
// Rows are per UTC day and subject (account, board, principal, client address, and one platform
// row), plus ten-minute buckets per address and principal that only signals of abuse create
// (refusals, sign-ups, anonymous boards, shouts, socket budget closures), so the abuse ranking reads
// one small range per bucket. The add that creates a subject's row of a day counts the subject as
// active that day on the platform row: nothing is ever counted by scanning.
import type { Identity } from '../auth/identity.js';
import type { RequestContext } from '../request-context.js';
import type { Store, UsageRecord } from '../../store/ports/store.js';

export type UsageScope = UsageRecord['scope'];
export const PLATFORM_KEY = 'all';
/** The abuse buckets' width. */
export const BUCKET_MS = 10 * 60_000;
/** Rows waiting for a flush beyond this are dropped (and counted): memory stays bounded under a flood of distinct addresses. */
const MAX_PENDING_ROWS = 50_000;
const FLUSH_PARALLEL = 8;
const KEY_CHARS = 200;

const DAY_MS = 86_400_000;

/**
 * Names the period of `ms` holding a time by the first `chars` of its start's ISO form; the period
 * last asked for is kept, so a request pays no date formatting.
 */
function periodNamer(ms: number, chars: number): (at: number) => string {
  let kept = { start: 0, name: new Date(0).toISOString().slice(0, chars) };
  return (at) => {
    if (at >= kept.start && at < kept.start + ms) return kept.name;
    const start = Math.floor(at / ms) * ms;
    const name = new Date(start).toISOString().slice(0, chars);
    if (at >= kept.start) kept = { start, name };
    return name;
  };
}

/** YYYY-MM-DD (UTC). */
export const dayOf = periodNamer(DAY_MS, 10);
/** YYYY-MM-DDTHH:MM (UTC) of the ten-minute bucket holding `at`: it sorts after its day's `YYYY-MM-DD` and before the next day. */
export const bucketOf = periodNamer(BUCKET_MS, 16);
export const usageId = (day: string, scope: UsageScope, key: string): string => `${day}:${scope}:${key}`;

/** The `days` UTC days ending with the one holding `now`, oldest first. */
export function lastDays(now: number, days: number): string[] {
  const out: string[] = [];
  for (let i = days - 1; i >= 0; i--) out.push(dayOf(now - i * DAY_MS));
  return out;
}

/** Operations whose success is a signal the abuse ranking follows. */
const SIGNALS: Record<string, { counter: string; on: 'address' | 'principal' }> = {
  'POST /api/auth/signup': { counter: 'signups', on: 'address' },
  'POST /api/accounts/anon-provision': { counter: 'anonBoards', on: 'address' },
  'POST /api/shouts': { counter: 'shouts', on: 'principal' },
};

interface Pending {
  day: string;
  scope: UsageScope;
  key: string;
  counts: Record<string, number>;
}

/** Rows waiting for the next flush by period (day or bucket), scope and key: a request finds its rows without building their ids. */
type PendingRows = Map<string, Map<UsageScope, Map<string, Pending>>>;

const REQUESTS = ['requests'] as const;

/** An open socket as the recorder sees it: whose it is. */
export interface UsageSocket {
  readonly identity: Identity;
}

/** The sockets open on this node (the hub's): the recorder keeps nothing of its own per socket. */
export interface OpenSockets<S extends UsageSocket = UsageSocket> {
  connections(): Iterable<S>;
  /** When `conn` opened (by the recorder's clock); undefined once it closed. */
  openedAt(conn: S): number | undefined;
}

export class UsageRecorder {
  private pending: PendingRows = new Map();
  private pendingCount = 0;
  /**
   * The open sockets, whose time is counted in whole seconds from when each opened: at each flush,
   * what it adds to the whole seconds since it opened (a socket's seconds so far are those up to the
   * last flush, or none if it opened since), and at its close the rest.
   */
  private open: OpenSockets | null = null;
  /** When sockets' time was last counted (the last flush), if it was. */
  private accruedAt: number | null = null;
  private flushing: Promise<void> | null = null;
  /**
   * The rows each credential's last plain request (counted, neither refused nor a signal) added to,
   * with what picked them: a row stays in `pending` (a failed write is merged back into the row
   * there, never replaces it) until a flush swaps the map, which starts these maps anew (an entry
   * kept past it would hold the whole swapped map, each credential's last rows with it).
   */
  private lastRows = new WeakMap<Identity, { day: string; address: string; boardId: string | null; rows: Pending[] }>();
  /**
   * As `lastRows`, for each credential's last refusal (401, 403, 429): its day rows and its two
   * ten-minute buckets, with the status and bucket that picked them. Under a flood of refusals each
   * adds to the same seven rows: found again through the identity, not through seven lookups.
   */
  private lastRefusals = new WeakMap<
    Identity,
    {
      day: string;
      bucket: string;
      status: number;
      address: string;
      boardId: string | null;
      days: Pending[];
      buckets: Pending[];
    }
  >();
  /** Increments lost: the pending map was full, or a flush failed and they could not be kept. */
  dropped = 0;
  lastFlush: { at: number; rows: number; error: string | null } | null = null;

  constructor(
    private readonly store: Pick<Store, 'usage'>,
    private readonly clock: () => number,
  ) {}

  /** One routed response (PipelineDeps.record). */
  record(ctx: RequestContext, status: number): void {
    const day = dayOf(ctx.now);
    const identity = ctx.identity;
    const boardId = ctx.project?.id ?? (identity?.kind === 'token' ? identity.boardId : null);
    // The refusals the abuse ranking counts, each on a counter of its own (no name built per request).
    const refusal = status === 429 ? 'r429' : status === 401 ? 'r401' : status === 403 ? 'r403' : null;
    const signal = status < 300 ? SIGNALS[ctx.operation] : undefined;
    const plain = !refusal && !signal && identity !== null;
    if (refusal && identity) {
      const last = this.lastRefusals.get(identity);
      if (
        last &&
        last.status === status &&
        last.day === day &&
        last.address === ctx.remoteAddress &&
        last.boardId === boardId &&
        last.bucket === bucketOf(ctx.now)
      ) {
        for (const row of last.days) {
          row.counts.requests = (row.counts.requests ?? 0) + 1;
          row.counts[refusal] = (row.counts[refusal] ?? 0) + 1;
        }
        for (const row of last.buckets) row.counts[refusal] = (row.counts[refusal] ?? 0) + 1;
        return;
      }
    }
    if (plain) {
      // A credential's requests count on the same rows until a flush takes them or a subject
      // changes: found again through the identity, not through four maps each.
      const last = this.lastRows.get(identity);
      if (last && last.day === day && last.address === ctx.remoteAddress && last.boardId === boardId) {
        for (const row of last.rows) row.counts.requests = (row.counts.requests ?? 0) + 1;
        return;
      }
    }
    const counters = refusal ? ['requests', refusal] : REQUESTS;
    const rows = [
      this.add(day, 'platform', PLATFORM_KEY, counters),
      this.add(day, 'address', ctx.remoteAddress, counters),
    ];
    if (identity)
      rows.push(
        this.add(day, 'principal', identity.principal, counters),
        this.add(day, 'account', identity.accountId, counters),
      );
    if (boardId) rows.push(this.add(day, 'board', boardId, counters));
    if (plain) {
      if (!rows.includes(null))
        this.lastRows.set(identity, {
          day,
          address: ctx.remoteAddress,
          boardId,
          rows: rows as Pending[],
        }); // none dropped
      return;
    }
    if (!refusal && !signal) return;
    const bucket = bucketOf(ctx.now);
    if (refusal) {
      const buckets = [this.add(bucket, 'address', ctx.remoteAddress, [refusal])];
      if (identity) {
        buckets.push(this.add(bucket, 'principal', identity.principal, [refusal]));
        if (!rows.includes(null) && !buckets.includes(null))
          this.lastRefusals.set(identity, {
            day,
            bucket,
            status,
            address: ctx.remoteAddress,
            boardId,
            days: rows as Pending[],
            buckets: buckets as Pending[],
          }); // none dropped
      }
    }
    if (signal) {
      const key = signal.on === 'address' ? ctx.remoteAddress : identity?.principal;
      if (key) {
        this.add(bucket, signal.on, key, [signal.counter]);
        this.add(day, signal.on, key, [signal.counter]);
      }
      this.add(day, 'platform', PLATFORM_KEY, [signal.counter]);
    }
  }

  /** A commit of this node's board actors, with the events it appended. */
  committed(boardId: string, events: number): void {
    const day = dayOf(this.clock());
    this.add(day, 'board', boardId, ['commits'], 1);
    this.add(day, 'board', boardId, ['events'], events);
    this.add(day, 'platform', PLATFORM_KEY, ['commits'], 1);
    this.add(day, 'platform', PLATFORM_KEY, ['events'], events);
  }

  /** Counts the time of the sockets `open` holds (src/server/sockets.ts: the hub). */
  countSockets(open: OpenSockets): void {
    this.open = open;
  }

  /** A socket closes (told before `open` forgets it): the rest of its time is counted. */
  socketClosed(conn: UsageSocket): void {
    const openedAt = this.open?.openedAt(conn);
    if (openedAt !== undefined) this.accrue(conn, openedAt, this.clock());
  }

  /** A socket closed for spending its message budget (src/ws/budget.ts). */
  overBudget(identity: Identity): void {
    const now = this.clock();
    this.add(bucketOf(now), 'principal', identity.principal, ['socketClosures']);
    this.add(dayOf(now), 'principal', identity.principal, ['socketClosures']);
  }

  /** Writes what was counted since the last flush; concurrent callers share one flush. */
  flush(): Promise<void> {
    this.flushing ??= this.flushOnce().finally(() => (this.flushing = null));
    return this.flushing;
  }

  get pendingRows(): number {
    return this.pendingCount;
  }

  /** Adds the whole seconds `conn` (open since `openedAt`) was open up to `now` and not counted yet. */
  private accrue(conn: UsageSocket, openedAt: number, now: number): void {
    const counted =
      this.accruedAt !== null && this.accruedAt >= openedAt ? Math.floor((this.accruedAt - openedAt) / 1000) : 0;
    const seconds = Math.floor((now - openedAt) / 1000) - counted;
    if (seconds <= 0) return;
    const day = dayOf(now);
    const { identity } = conn;
    this.add(day, 'account', identity.accountId, ['socketSeconds'], seconds);
    this.add(day, 'principal', identity.principal, ['socketSeconds'], seconds);
    if (identity.kind === 'token' && identity.boardId)
      this.add(day, 'board', identity.boardId, ['socketSeconds'], seconds);
    this.add(day, 'platform', PLATFORM_KEY, ['socketSeconds'], seconds);
  }

  /** Adds to a row; the row, or null when it was dropped (the pending rows are full). */
  private add(day: string, scope: UsageScope, rawKey: string, counters: readonly string[], by = 1): Pending | null {
    const key = rawKey.slice(0, KEY_CHARS);
    const rows = this.rowsOf(day, scope);
    let row = rows.get(key);
    if (!row) {
      if (this.pendingCount >= MAX_PENDING_ROWS) {
        this.dropped += by;
        return null;
      }
      row = { day, scope, key, counts: {} };
      rows.set(key, row);
      this.pendingCount++;
    }
    for (const c of counters) row.counts[c] = (row.counts[c] ?? 0) + by;
    return row;
  }

  private rowsOf(day: string, scope: UsageScope): Map<string, Pending> {
    let scopes = this.pending.get(day);
    if (!scopes) this.pending.set(day, (scopes = new Map()));
    let rows = scopes.get(scope);
    if (!rows) scopes.set(scope, (rows = new Map()));
    return rows;
  }

  private async flushOnce(): Promise<void> {
    const now = this.clock();
    if (this.open)
      for (const conn of this.open.connections()) {
        const openedAt = this.open.openedAt(conn);
        if (openedAt !== undefined) this.accrue(conn, openedAt, now);
      }
    this.accruedAt = now;
    const rows: [string, Pending][] = [];
    for (const scopes of this.pending.values())
      for (const byKey of scopes.values())
        for (const row of byKey.values()) rows.push([usageId(row.day, row.scope, row.key), row]);
    this.pending = new Map();
    this.pendingCount = 0;
    this.lastRows = new WeakMap();
    this.lastRefusals = new WeakMap();
    // Subjects first: the add creating a subject's row of a day counts it active on the platform row, written last.
    const platform = rows.filter(([, r]) => r.scope === 'platform');
    const subjects = rows.filter(([, r]) => r.scope !== 'platform');
    let failure: unknown = null;
    const firsts = new Map<string, Record<string, number>>();
    const write = async ([id, row]: [string, Pending]) => {
      try {
        const created = await this.store.usage.add(id, { day: row.day, scope: row.scope, key: row.key }, row.counts);
        const active = created && row.day.length === 10 ? ACTIVE[row.scope]?.(row.key) : undefined;
        if (active) {
          const day = firsts.get(row.day) ?? firsts.set(row.day, {}).get(row.day)!;
          day[active] = (day[active] ?? 0) + 1;
        }
      } catch (e) {
        failure = e;
        this.keep(row);
      }
    };
    for (let i = 0; i < subjects.length; i += FLUSH_PARALLEL)
      await Promise.all(subjects.slice(i, i + FLUSH_PARALLEL).map(write));
    for (const [day, counts] of firsts) {
      const id = usageId(day, 'platform', PLATFORM_KEY);
      const held = platform.find(([pid]) => pid === id);
      if (held) for (const [c, n] of Object.entries(counts)) held[1].counts[c] = (held[1].counts[c] ?? 0) + n;
      else platform.push([id, { day, scope: 'platform', key: PLATFORM_KEY, counts }]);
    }
    for (const row of platform) await write(row);
    this.lastFlush = { at: now, rows: rows.length, error: failure ? String((failure as Error).name ?? 'Error') : null };
  }

  /** Puts a row that could not be written back, to go out with the next flush. */
  private keep(row: Pending): void {
    const rows = this.rowsOf(row.day, row.scope);
    const held = rows.get(row.key);
    if (!held && this.pendingCount >= MAX_PENDING_ROWS) {
      this.dropped += Object.values(row.counts).reduce((a, b) => a + b, 0);
      return;
    }
    if (!held) {
      rows.set(row.key, row);
      this.pendingCount++;
      return;
    }
    for (const [c, n] of Object.entries(row.counts)) held.counts[c] = (held.counts[c] ?? 0) + n;
  }
}

/** Which platform counter a subject's first row of a day adds to. */
const ACTIVE: Partial<Record<UsageScope, (key: string) => string | undefined>> = {
  account: () => 'activeAccounts',
  board: () => 'activeBoards',
  principal: (key) => (key.startsWith('agent:') ? 'activeAgents' : undefined),
};

/** Sums the counts of rows (missing counters are 0). */
export function sumCounts(rows: readonly Pick<UsageRecord, 'counts'>[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const row of rows) for (const [c, n] of Object.entries(row.counts)) total[c] = (total[c] ?? 0) + n;
  return total;
}
