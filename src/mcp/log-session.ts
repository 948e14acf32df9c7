// The stateless session of /mcp: nothing is held between calls, so once a tool's own call has
// drawn on the caller's budget the board itself is asked what the caller missed. Its log gives the
// caller's leases that expired or were revoked (lease.expired / lease.revoked events whose lease it
// held), and the shouts page gives the direct shouts it had not received (reading them marks them
// delivered, so each is told once). Which losses were told already is remembered per node, so a
// loss may be told twice (on another node, or after a restart) but is never missed within the
// look-back.
//
// Those two reads are the board's, not the caller's: they draw on no budget (NOTICE_READS run
// apart, src/mcp/in-process.ts). What bounds them instead: they run only after a call in which at
// least one of the tool's own requests drew on the budget (a request refused before, by its input,
// its credential or the budget itself, does not count), at most once per such call, and each reads
// back a page (PAGE entries) at a time to where the last check on this node reached, MAX_PAGES at
// most: a check cut short remembers the stretch it left (its gap), and the next ones read it.
import type { BoardClient, LeaseGrant } from './client.js';
import type { Notice } from './notices.js';
import {
  PlainLeases,
  type BoardSession,
  type LeaseReply,
  type LeaseRef,
  type SessionRefusals,
  type SubmitReply,
  type VerifyBody,
  type VerifyReply,
} from './session.js';

/** The operations the notices read, on no budget of the caller's. */
export const NOTICE_READS = ['POST /api/history/query', 'GET /api/shouts'] as const;

/** How far back a caller's first call on this node looks for losses. */
const LOOK_BACK_MS = 60 * 60_000;
/** Overlap with the previous check, for events committed while it ran. */
const OVERLAP_MS = 60_000;
const KEEP_CALLERS = 10_000;
/** Entries per page of either read. */
const PAGE = 100;
/** Pages either read takes in one check at most; what it leaves is read by the next checks. */
const MAX_PAGES = 10;

/** What a check left unread: entries from `from` on and older than the cursor `before` (the newest when undefined). */
interface Gap<C> {
  from: number;
  before: C | undefined;
}

/** A caller's checks on this node: when the last one ran, the losses told, and what each read left. */
interface Checked {
  checkedAt: number;
  told: Set<number>;
  losses: Gap<number> | null;
  shouts: Gap<string> | null;
}

/** Per node: when each caller's losses were last checked, and which were told. */
export class ToldMemory {
  private readonly callers = new Map<string, Checked>();

  of(key: string): Checked | undefined {
    const entry = this.callers.get(key);
    if (entry) {
      this.callers.delete(key); // most recently used last
      this.callers.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: Checked): void {
    this.callers.set(key, entry);
    if (this.callers.size > KEEP_CALLERS) this.callers.delete(this.callers.keys().next().value!);
  }
}

export interface LogSessionOptions {
  /** The tools' client: each request on the caller's budget. */
  client: BoardClient;
  /** The notices' client: NOTICE_READS on no budget. */
  noticeClient: BoardClient;
  /** True when a request of `client` drew on the budget since the last asking (the count restarts). */
  drew(): boolean;
  query: { projectId?: string };
  principal: string;
  /** The board's clock when the request came in. */
  now: number;
  memory: ToldMemory;
}

interface LoggedEnd {
  seq: number;
  type: string;
  workId: string | null;
  data: { lease?: { holder?: string; purpose?: 'work' | 'verify'; fencingToken?: number }; reason?: string };
}

interface ShoutRead {
  id: string;
  from: string;
  to: string | null;
  text: string;
  workId: string | null;
  at: string;
  deliveredAt: string | null;
}

/** One page newest first, older than `before`: its entries, the cursor past them, and whether it reached `from`. */
type PageRead<T, C> = (before: C | undefined) => Promise<{ items: T[]; next: C | null; reachedFrom: boolean }>;

/**
 * Newest first from `before` back to where `page` reaches its `from`, within `budget` pages; `rest`
 * is the cursor where it stopped short (null once it got there). A first page that fails throws; a
 * later one ends the read there, as if cut short.
 */
async function readBack<T, C>(
  page: PageRead<T, C>,
  before: C | undefined,
  budget: { pages: number },
): Promise<{ items: T[]; rest: C | null | undefined }> {
  const items: T[] = [];
  let cursor = before;
  for (let first = true; budget.pages > 0; first = false) {
    budget.pages--;
    let read: Awaited<ReturnType<PageRead<T, C>>>;
    try {
      read = await page(cursor);
    } catch (err) {
      if (first) throw err;
      break;
    }
    items.push(...read.items);
    if (read.reachedFrom || read.next === null) return { items, rest: null };
    cursor = read.next;
  }
  return { items, rest: cursor };
}

/**
 * One check's read: the stretch since the last check (from `from`), then what earlier checks left
 * (`gap`, from no earlier than `floor`), MAX_PAGES in all. Newest first; the gap it leaves in turn
 * (two left over become one, spanning the stretch read between them: read again, told once).
 */
async function readChecked<T, C>(
  page: (from: number) => PageRead<T, C>,
  from: number,
  floor: number,
  gap: Gap<C> | null,
): Promise<{ items: T[]; gap: Gap<C> | null }> {
  const budget = { pages: MAX_PAGES };
  const fresh = await readBack(page(from), undefined, budget);
  const items = fresh.items;
  let left: Gap<C> | null = gap && { from: Math.max(floor, gap.from), before: gap.before };
  if (left && budget.pages > 0) {
    try {
      const older = await readBack(page(left.from), left.before, budget);
      items.push(...older.items);
      left = older.rest === null ? null : { from: left.from, before: older.rest };
    } catch {
      // left as it was
    }
  }
  if (fresh.rest === null) return { items, gap: left };
  return { items, gap: { from: left?.from ?? from, before: fresh.rest } };
}

export class LogSession implements BoardSession {
  readonly keepsLeases = false;
  readonly pushesLive = false;
  /** In-process: every answer is the board's, the principal is the request's, and the lease id the agent's. */
  readonly refusals: SessionRefusals = { principal: [], anyCall: [], namingLease: [] };
  readonly client: BoardClient;
  readonly query: { projectId?: string };
  private readonly plain: PlainLeases;

  constructor(private readonly options: LogSessionOptions) {
    this.client = options.client;
    this.query = options.query;
    this.plain = new PlainLeases(this.client, this.query);
  }

  async principal(): Promise<string> {
    return this.options.principal;
  }

  async beforeCall(): Promise<Notice[]> {
    return [];
  }

  /** What the caller missed, asked once the tool's own call drew on its budget (never otherwise). */
  async afterCall(): Promise<Notice[]> {
    if (!this.options.drew()) return [];
    const { principal, now, memory } = this.options;
    const key = `${principal}|${this.query.projectId ?? ''}`;
    const entry = memory.of(key) ?? {
      checkedAt: now - LOOK_BACK_MS,
      told: new Set<number>(),
      losses: null,
      shouts: null,
    };
    const floor = now - LOOK_BACK_MS;
    const from = Math.max(floor, entry.checkedAt - OVERLAP_MS);
    const [lost, shouts] = await Promise.all([
      this.lostLeases(entry, from, floor),
      this.directShouts(entry, from, floor),
    ]);
    if (entry.told.size > 500) entry.told = new Set([...entry.told].slice(-250));
    memory.set(key, { ...entry, checkedAt: now });
    return [...lost, ...shouts];
  }

  claimed(_grant: LeaseGrant): void {}

  renew(ref: LeaseRef, ttlSeconds?: number): Promise<LeaseReply> {
    return this.plain.renew(this.leaseOf(ref).leaseId, ttlSeconds);
  }

  submit(ref: LeaseRef, head: string): Promise<SubmitReply> {
    return this.plain.submit(this.leaseOf(ref).leaseId, head);
  }

  release(ref: LeaseRef): Promise<LeaseReply> {
    return this.plain.release(this.leaseOf(ref).leaseId);
  }

  verify(body: VerifyBody): Promise<VerifyReply> {
    return this.plain.verify(body);
  }

  leaseOf(ref: LeaseRef): { leaseId: string; workId: string | null } {
    return { leaseId: ref.leaseId ?? '', workId: ref.workId ?? null };
  }

  leaseReport(): null {
    return null;
  }

  /** The caller's leases that ended under it since its last check (or within the look-back). */
  private async lostLeases(entry: Checked, from: number, floor: number): Promise<Notice[]> {
    const page =
      (since: number): PageRead<LoggedEnd, number> =>
      async (before) => {
        const { events, nextBefore } = (await this.options.noticeClient.post('/api/history/query', {
          body: {
            types: ['lease.expired', 'lease.revoked'],
            from: new Date(since).toISOString(),
            limit: PAGE,
            ...(before !== undefined && { before }),
          },
          params: { query: this.query },
        })) as unknown as { events: LoggedEnd[]; nextBefore: number | null };
        return { items: events, next: nextBefore, reachedFrom: nextBefore === null };
      };
    let events: LoggedEnd[];
    try {
      ({ items: events, gap: entry.losses } = await readChecked(page, from, floor, entry.losses));
    } catch {
      // A credential without the history group (its own refused calls tell it), or a read that
      // failed: the stretch since the last check is left for the next.
      entry.losses = { from: entry.losses?.from ?? from, before: undefined };
      return [];
    }
    const notices: Notice[] = [];
    for (const e of events.sort((a, b) => a.seq - b.seq)) {
      if (e.data.lease?.holder !== this.options.principal || entry.told.has(e.seq) || !e.workId) continue;
      entry.told.add(e.seq);
      const reason = e.type === 'lease.expired' ? 'expired' : 'revoked';
      notices.push({
        kind: 'lease.lost',
        workId: e.workId,
        purpose: e.data.lease.purpose ?? null,
        fencingToken: e.data.lease.fencingToken ?? null,
        reason,
        code: null,
        detail: reason === 'revoked' ? (e.data.reason ?? null) : null,
      });
    }
    return notices;
  }

  /** Direct shouts to the caller that this read delivered (none had reached it before). */
  private async directShouts(entry: Checked, from: number, floor: number): Promise<Notice[]> {
    const { principal, now } = this.options;
    const page =
      (since: number): PageRead<ShoutRead, string> =>
      async (before) => {
        const { shouts, next } = await this.options.noticeClient.get('/api/shouts', {
          params: {
            query: { ...this.query, limit: String(PAGE), ...(before ? { before } : { order: 'newest' }) },
          },
        });
        const oldest = shouts.at(-1);
        return { items: shouts, next, reachedFrom: !oldest || Date.parse(oldest.at) < since };
      };
    let shouts: ShoutRead[];
    try {
      ({ items: shouts, gap: entry.shouts } = await readChecked(page, from, floor, entry.shouts));
    } catch {
      entry.shouts = { from: entry.shouts?.from ?? from, before: undefined };
      return [];
    }
    return [...new Map(shouts.map((s) => [s.id, s])).values()]
      .filter(
        (s) => s.to === principal && s.from !== principal && s.deliveredAt !== null && Date.parse(s.deliveredAt) >= now,
      )
      .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
      .map((s) => ({ kind: 'shout.direct', shoutId: s.id, from: s.from, text: s.text, workId: s.workId, at: s.at }));
  }
}
