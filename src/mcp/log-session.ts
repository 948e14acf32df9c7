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
// one page: 100 log entries and 50 shouts at most.
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

/** Per node: when each caller's losses were last checked, and which were told. */
export class ToldMemory {
  private readonly callers = new Map<string, { checkedAt: number; told: Set<number> }>();

  of(key: string): { checkedAt: number; told: Set<number> } | undefined {
    const entry = this.callers.get(key);
    if (entry) {
      this.callers.delete(key); // most recently used last
      this.callers.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: { checkedAt: number; told: Set<number> }): void {
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
    const [lost, shouts] = await Promise.all([this.lostLeases(), this.directShouts()]);
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
  private async lostLeases(): Promise<Notice[]> {
    const { principal, now, memory } = this.options;
    const key = `${principal}|${this.query.projectId ?? ''}`;
    const entry = memory.of(key) ?? { checkedAt: now - LOOK_BACK_MS, told: new Set<number>() };
    const from = new Date(Math.max(now - LOOK_BACK_MS, entry.checkedAt - OVERLAP_MS)).toISOString();
    let events: LoggedEnd[];
    try {
      ({ events } = (await this.options.noticeClient.post('/api/history/query', {
        body: { types: ['lease.expired', 'lease.revoked'], from, limit: 100 },
        params: { query: this.query },
      })) as unknown as { events: LoggedEnd[] });
    } catch {
      return []; // a credential without the history group: its own refused calls tell it
    }
    const notices: Notice[] = [];
    for (const e of events.reverse()) {
      if (e.data.lease?.holder !== principal || entry.told.has(e.seq) || !e.workId) continue;
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
    if (entry.told.size > 500) entry.told = new Set([...entry.told].slice(-250));
    memory.set(key, { checkedAt: now, told: entry.told });
    return notices;
  }

  /** Direct shouts to the caller that this read delivered (none had reached it before). */
  private async directShouts(): Promise<Notice[]> {
    const { principal, now } = this.options;
    let shouts: {
      id: string;
      from: string;
      to: string | null;
      text: string;
      workId: string | null;
      at: string;
      deliveredAt: string | null;
    }[];
    try {
      ({ shouts } = await this.options.noticeClient.get('/api/shouts', {
        params: { query: { ...this.query, order: 'newest', limit: '50' } },
      }));
    } catch {
      return [];
    }
    return shouts
      .filter(
        (s) => s.to === principal && s.from !== principal && s.deliveredAt !== null && Date.parse(s.deliveredAt) >= now,
      )
      .reverse()
      .map((s) => ({ kind: 'shout.direct', shoutId: s.id, from: s.from, text: s.text, workId: s.workId, at: s.at }));
  }
}
