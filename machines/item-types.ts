// The item lifecycle's data: what the machine keeps per item, the events it takes, what it emits.

export const ITEM_STATES = [
  'pending',
  'ready',
  'claimed',
  'awaiting_verify',
  'verifying',
  'done',
  'blocked',
  'cancelled',
] as const;
export type ItemState = (typeof ITEM_STATES)[number];

export interface Lease {
  leaseId: string;
  holder: string;
  purpose: 'work' | 'verify';
  fencingToken: number;
  grantedAt: number;
  expiresAt: number;
  /** Renewals never pass this: 24 h from the grant. */
  hardExpiresAt: number;
  ttlMs: number;
}

export interface Submission {
  head: string;
  by: string;
  at: number;
  /**
   * The head a supersede replaced, when a supersede made this submission (absent after a submit):
   * so a supersede repeated after its answer was lost is told from one naming a submitted head.
   * Internal: the item's public view leaves it out.
   */
  supersedes?: string;
}

export interface Verification {
  by: string;
  head: string;
  verdict: 'pass' | 'fail';
  finding: string | null;
  at: number;
  /** Digests of the evidence the verifier kept, when it sent any (never the material itself). */
  evidence?: string[];
}

/** The lifecycle part of an item: the machine's context. */
export interface ItemLife {
  verify: 'none' | 'required';
  attempts: number;
  maxAttempts: number;
  lease: Lease | null;
  submission: Submission | null;
  verifications: Verification[];
  /** Principals that held a work lease since the item last became ready (independence). */
  workHolders: string[];
  finding: string | null;
  overridden: { by: string; reason: string; at: number } | null;
  blockedReason: string | null;
}

export const HARD_LEASE_CAP_MS = 24 * 3600_000;

/** The lease a CLAIM grants: the machine's `grantLease` and the table's `grant` both take it from here. */
/** The verification a verdict records: the machine's `recordVerification` and the table's `recordVerdict` both take it from here. */
export const verificationOf = (e: Extract<ItemEvent, { type: 'VERIFY' }>): Verification => ({
  by: e.principal,
  head: e.head,
  verdict: e.verdict,
  finding: e.finding,
  at: e.now,
  ...(e.evidence?.length ? { evidence: e.evidence } : {}),
});

export const grantedLease = (e: Extract<ItemEvent, { type: 'CLAIM' }>): Lease => ({
  leaseId: e.leaseId,
  holder: e.principal,
  purpose: e.purpose,
  fencingToken: e.fencingToken,
  grantedAt: e.now,
  expiresAt: e.now + e.ttlMs,
  hardExpiresAt: e.now + HARD_LEASE_CAP_MS,
  ttlMs: e.ttlMs,
});

/**
 * `depsDone` (on the events that can put an item back in line: release, expiry, a failed verdict,
 * unblock, reopen) says whether every dependency is done, which only the board knows: the item
 * goes to ready only then, else to pending (DOMAIN.md: only `done` satisfies a dependency).
 */
export type ItemEvent =
  | { type: 'DEPS_DONE' }
  | { type: 'DEP_REOPENED' }
  | {
      type: 'CLAIM';
      principal: string;
      purpose: 'work' | 'verify';
      leaseId: string;
      fencingToken: number;
      ttlMs: number;
      now: number;
    }
  | { type: 'RENEW'; leaseId: string; ttlMs: number; now: number }
  | { type: 'PROGRESS'; leaseId: string; now: number }
  | { type: 'RELEASE'; leaseId: string; depsDone: boolean; now: number }
  | { type: 'EXPIRE'; depsDone: boolean; now: number }
  | { type: 'SUBMIT'; leaseId: string; head: string; now: number }
  | { type: 'SUPERSEDE'; principal: string; head: string; now: number }
  | {
      type: 'VERIFY';
      principal: string;
      head: string;
      verdict: 'pass' | 'fail';
      finding: string | null;
      /** Digests of the verifier's evidence; kept on the verification when there are any. */
      evidence?: string[];
      depsDone: boolean;
      now: number;
    }
  | { type: 'BLOCK'; reason: string; now: number }
  | { type: 'UNBLOCK'; depsDone: boolean; now: number }
  | { type: 'CANCEL'; reason: string; now: number }
  | { type: 'REOPEN'; depsDone: boolean; now: number }
  | { type: 'OVERRIDE'; principal: string; reason: string; now: number };

export type ItemEventType = ItemEvent['type'];

/** The events that carry `depsDone`, filled in by the board (machines/board.ts applyEvent). */
export type DepsEvent = Extract<ItemEvent, { depsDone: boolean }>;
export const DEPS_EVENTS: ReadonlySet<ItemEventType> = new Set<DepsEvent['type']>([
  'RELEASE',
  'EXPIRE',
  'VERIFY',
  'UNBLOCK',
  'REOPEN',
]);

/** Codes the machine refuses with; the registry gives each its status, meaning and fix. */
export type RefusalCode =
  | 'LEASE_NOT_HELD'
  | 'LEASE_EXPIRED'
  | 'ITEM_NOT_READY'
  | 'VERIFY_NOT_INDEPENDENT'
  | 'HEAD_MISMATCH'
  | 'EVIDENCE_EXISTS'
  | 'FINDING_REQUIRED'
  | 'NOT_SUBMITTER';

/** What the machine emits: board events, or a refusal. */
export type ItemEmitted =
  | { type: 'lease.granted'; lease: Lease }
  | { type: 'lease.renewed'; lease: Lease }
  | { type: 'lease.released'; lease: Lease }
  | { type: 'lease.expired'; lease: Lease }
  | { type: 'lease.revoked'; lease: Lease; reason: string }
  | { type: 'item.submitted'; head: string; by: string }
  | { type: 'item.superseded'; head: string; previous: string; by: string }
  | { type: 'item.verified'; verification: Verification }
  | { type: 'item.overridden'; by: string; reason: string }
  | { type: 'refused'; code: RefusalCode };
