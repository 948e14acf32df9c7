// What the tools need from a transport's session: the client, the board it works on, the caller,
// the notices to put first, and the lease operations. The stdio session keeps its leases alive and
// knows them by work id (live-session.ts); the stateless HTTP one holds nothing between calls and
// acts on the lease id the agent passes back (log-session.ts).
import type { BoardClient, LeaseGrant, Reply } from './client.js';
import type { Notice } from './notices.js';
import type { LocalCode } from './results.js';
import type { Operation } from './route-codes.js';

/** Which lease a tool means: the stdio session finds it by work id; over HTTP the lease id names it. */
export interface LeaseRef {
  workId?: string | undefined;
  leaseId?: string | undefined;
}

export type SubmitReply = Reply<'/api/submit', 'post'>;
export type LeaseReply = Reply<'/api/lease', 'post'>;
export type VerifyReply = Reply<'/api/verify', 'post'>;
export type VerifyBody = {
  workId: string;
  head: string;
  verdict: 'pass' | 'fail';
  finding?: string;
  evidence?: string[];
};

/** The board operations and the codes of its own a session adds to its tools'. */
export interface SessionRefusals {
  /** The board operations principal() calls. */
  principal: readonly Operation[];
  /** Codes it answers any call with by itself: the board did not answer, or something else did. */
  anyCall: readonly string[];
  /** Codes it answers a call naming a lease with: none held here that matches, or several. */
  namingLease: readonly LocalCode[];
}

export interface BoardSession {
  readonly client: BoardClient;
  /** The project selection every call carries: `{}` for the token's own board. */
  readonly query: { projectId?: string };
  /** True when the session keeps leases alive and knows them by work id (stdio). */
  readonly keepsLeases: boolean;
  /** True when notices reach the client as they happen (stdio); otherwise the tools send them with their result. */
  readonly pushesLive: boolean;
  /** What the session adds to its tools' refusals (tool-codes.ts). */
  readonly refusals: SessionRefusals;
  /** The caller's principal (`agent:<id>`). */
  principal(): Promise<string>;
  /** Before each tool runs: notices the agent must read first (a lost lease before anything else). */
  beforeCall(): Promise<Notice[]>;
  /** After it ran (refused or not): notices that arrived meanwhile, or were asked for once it ran. Never throws. */
  afterCall(): Promise<Notice[]>;
  /** The lease `ref` names (the stdio session finds it by work id); NO_LEASE_HERE when none. */
  leaseOf(ref: LeaseRef): { leaseId: string; workId: string | null };
  /** A claim was granted: keep it (stdio) or nothing (HTTP). */
  claimed(grant: LeaseGrant): void;
  renew(ref: LeaseRef, ttlSeconds?: number): Promise<LeaseReply>;
  submit(ref: LeaseRef, head: string): Promise<SubmitReply>;
  release(ref: LeaseRef): Promise<LeaseReply>;
  /** Records a verdict; the verify lease on the item is over. */
  verify(body: VerifyBody): Promise<VerifyReply>;
  /** What board_status adds about this session's leases (keep-alive state), or null. */
  leaseReport(): Record<string, unknown>[] | null;
}

/** The lease operations by lease id, for a session that holds nothing between calls. */
export class PlainLeases {
  constructor(
    private readonly client: BoardClient,
    private readonly query: { projectId?: string },
  ) {}

  renew(leaseId: string, ttlSeconds?: number): Promise<LeaseReply> {
    return this.client.post('/api/lease', {
      body: { leaseId, action: 'renew', ...(ttlSeconds !== undefined && { ttlSeconds }) },
      params: { query: this.query },
    });
  }

  release(leaseId: string): Promise<LeaseReply> {
    return this.client.post('/api/lease', { body: { leaseId, action: 'release' }, params: { query: this.query } });
  }

  submit(leaseId: string, head: string): Promise<SubmitReply> {
    return this.client.post('/api/submit', { body: { leaseId, head }, params: { query: this.query } });
  }

  verify(body: VerifyBody): Promise<VerifyReply> {
    return this.client.post('/api/verify', { body, params: { query: this.query } });
  }
}
