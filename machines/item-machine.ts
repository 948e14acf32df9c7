// The item lifecycle of DOMAIN.md as an XState 5 machine, used as a pure transition function over
// stored item snapshots. Guards carry the rules; refusals are emitted as data with their code.
// No I/O and no clock: time arrives on events (`now`).
import { and, assign, emit, not, setup } from 'xstate';
import {
  grantedLease,
  verificationOf,
  type DepsEvent,
  type ItemEmitted,
  type ItemEvent,
  type ItemLife,
} from './item-types.js';

type Of<T extends ItemEvent['type']> = Extract<ItemEvent, { type: T }>;

const REVOKED_BY: Partial<Record<ItemEvent['type'], string>> = {
  BLOCK: 'blocked',
  CANCEL: 'cancelled',
  SUPERSEDE: 'superseded',
  OVERRIDE: 'overridden',
  VERIFY: 'verified',
};

/** Every holder operation first refuses a stale or foreign lease id, then an expired lease. */
const HELD = [
  { guard: not('holds'), actions: 'refuseNotHeld' },
  { guard: 'leaseExpired', actions: 'refuseExpired' },
] as const;

/** A verdict, from awaiting_verify or verifying: the rules refuse first. */
const VERDICT_RULES = [
  { guard: not('independent'), actions: 'refuseNotIndependent' },
  { guard: not('sameHead'), actions: 'refuseHead' },
  { guard: 'evidenceExists', actions: 'refuseEvidence' },
  { guard: 'missingFinding', actions: 'refuseFinding' },
] as const;

/** Then pass, or fail back to ready. */
const VERDICTS = [
  { guard: 'passes', target: 'done', actions: ['recordVerification', 'emitVerified'] },
  {
    guard: 'depsDone',
    target: 'ready',
    actions: ['recordVerification', 'countAttempt', 'emitVerified', 'becameReady'],
  },
  // A dependency left done while the item was worked on: it waits for it, as a new item would.
  { target: 'pending', actions: ['recordVerification', 'countAttempt', 'emitVerified'] },
] as const;

/**
 * The same verdicts given while another holds the verify lease: the lease ends under its holder,
 * who is told so (lease.revoked, reason verified) as for every other ending not its own.
 */
const VERDICTS_OVER_HOLDER = [
  {
    guard: and(['leaseOfOther', 'passes']),
    target: 'done',
    actions: ['emitRevoked', 'recordVerification', 'emitVerified'],
  },
  {
    guard: and(['leaseOfOther', 'depsDone']),
    target: 'ready',
    actions: ['emitRevoked', 'recordVerification', 'countAttempt', 'emitVerified', 'becameReady'],
  },
  {
    guard: 'leaseOfOther',
    target: 'pending',
    actions: ['emitRevoked', 'recordVerification', 'countAttempt', 'emitVerified'],
  },
] as const;

export const itemMachine = setup({
  types: { context: {} as ItemLife, events: {} as ItemEvent, emitted: {} as ItemEmitted },
  guards: {
    holds: ({ context, event }) => 'leaseId' in event && context.lease?.leaseId === event.leaseId,
    leaseExpired: ({ context, event }) =>
      context.lease !== null && 'now' in event && event.now >= context.lease.expiresAt,
    verifyRequired: ({ context }) => context.verify === 'required',
    attemptsLeft: ({ context }) => context.attempts + 1 < context.maxAttempts,
    forWork: ({ event }) => (event as Of<'CLAIM'>).purpose === 'work',
    forVerify: ({ event }) => (event as Of<'CLAIM'>).purpose === 'verify',
    independent: ({ context, event }) => {
      const principal = (event as Of<'CLAIM'> | Of<'VERIFY'>).principal;
      return principal !== context.submission?.by && !context.workHolders.includes(principal);
    },
    isSubmitter: ({ context, event }) => (event as Of<'SUPERSEDE'>).principal === context.submission?.by,
    sameHead: ({ context, event }) => (event as Of<'SUPERSEDE'> | Of<'VERIFY'>).head === context.submission?.head,
    evidenceExists: ({ context, event }) => {
      const e = event as Of<'VERIFY'>;
      return context.verifications.some((v) => v.by === e.principal && v.head === e.head);
    },
    missingFinding: ({ event }) => (event as Of<'VERIFY'>).verdict === 'fail' && !(event as Of<'VERIFY'>).finding,
    passes: ({ event }) => (event as Of<'VERIFY'>).verdict === 'pass',
    leaseOfOther: ({ context, event }) =>
      context.lease !== null && context.lease.holder !== (event as Of<'VERIFY'>).principal,
    depsDone: ({ event }) => (event as DepsEvent).depsDone,
  },
  actions: {
    grantLease: assign(({ context, event }) => {
      const e = event as Of<'CLAIM'>;
      const lease = grantedLease(e);
      return {
        lease,
        workHolders:
          e.purpose === 'work' && !context.workHolders.includes(e.principal)
            ? [...context.workHolders, e.principal]
            : context.workHolders,
      };
    }),
    extendLease: assign(({ context, event }) => {
      const e = event as Of<'RENEW'> | Of<'PROGRESS'>;
      const lease = context.lease!;
      const ttl = e.type === 'RENEW' ? e.ttlMs : lease.ttlMs;
      return { lease: { ...lease, ttlMs: ttl, expiresAt: Math.min(e.now + ttl, lease.hardExpiresAt) } };
    }),
    emitGranted: emit(({ context }) => ({ type: 'lease.granted', lease: context.lease! }) as ItemEmitted),
    emitRenewed: emit(({ context }) => ({ type: 'lease.renewed', lease: context.lease! }) as ItemEmitted),
    emitReleased: emit(({ context }) => ({ type: 'lease.released', lease: context.lease! }) as ItemEmitted),
    emitExpired: emit(({ context }) => ({ type: 'lease.expired', lease: context.lease! }) as ItemEmitted),
    emitRevoked: emit(
      ({ context, event }) =>
        ({
          type: 'lease.revoked',
          lease: context.lease!,
          reason: REVOKED_BY[event.type] ?? event.type.toLowerCase(),
        }) as ItemEmitted,
    ),
    clearLease: assign({ lease: null }),
    becameReady: assign({ lease: null, workHolders: [] }),
    countAttempt: assign(({ context }) => ({ attempts: context.attempts + 1 })),
    exhausted: assign({ blockedReason: 'attempts exhausted' }),
    recordSubmission: assign(({ context, event }) => {
      const e = event as Of<'SUBMIT'>;
      return { submission: { head: e.head, by: context.lease!.holder, at: e.now }, lease: null, finding: null };
    }),
    emitSubmitted: emit(
      ({ context }) =>
        ({ type: 'item.submitted', head: context.submission!.head, by: context.submission!.by }) as ItemEmitted,
    ),
    supersede: assign(({ context, event }) => {
      const e = event as Of<'SUPERSEDE'>;
      const was = context.submission!;
      return { submission: { head: e.head, by: was.by, at: e.now, supersedes: was.head }, lease: null };
    }),
    emitSuperseded: emit(
      ({ context, event }) =>
        ({
          type: 'item.superseded',
          head: (event as Of<'SUPERSEDE'>).head,
          previous: context.submission!.head,
          by: context.submission!.by,
        }) as ItemEmitted,
    ),
    recordVerification: assign(({ context, event }) => {
      const e = event as Of<'VERIFY'>;
      const verification = verificationOf(e);
      return {
        verifications: [...context.verifications, verification],
        lease: null,
        finding: e.verdict === 'fail' ? e.finding : context.finding,
      };
    }),
    emitVerified: emit(
      ({ context }) => ({ type: 'item.verified', verification: context.verifications.at(-1)! }) as ItemEmitted,
    ),
    override: assign(({ event }) => {
      const e = event as Of<'OVERRIDE'>;
      return { overridden: { by: e.principal, reason: e.reason, at: e.now }, lease: null };
    }),
    emitOverridden: emit(
      ({ event }) =>
        ({
          type: 'item.overridden',
          by: (event as Of<'OVERRIDE'>).principal,
          reason: (event as Of<'OVERRIDE'>).reason,
        }) as ItemEmitted,
    ),
    block: assign(({ event }) => ({ blockedReason: (event as Of<'BLOCK'>).reason, lease: null })),
    unblock: assign({ blockedReason: null, attempts: 0 }),
    reopen: assign({ lease: null, workHolders: [], overridden: null, finding: null }),
    refuseNotHeld: emit({ type: 'refused', code: 'LEASE_NOT_HELD' }),
    refuseExpired: emit({ type: 'refused', code: 'LEASE_EXPIRED' }),
    refuseNotReady: emit({ type: 'refused', code: 'ITEM_NOT_READY' }),
    refuseNotIndependent: emit({ type: 'refused', code: 'VERIFY_NOT_INDEPENDENT' }),
    refuseHead: emit({ type: 'refused', code: 'HEAD_MISMATCH' }),
    refuseEvidence: emit({ type: 'refused', code: 'EVIDENCE_EXISTS' }),
    refuseFinding: emit({ type: 'refused', code: 'FINDING_REQUIRED' }),
    refuseNotSubmitter: emit({ type: 'refused', code: 'NOT_SUBMITTER' }),
  },
}).createMachine({
  id: 'item',
  initial: 'pending',
  context: {
    verify: 'none',
    attempts: 0,
    maxAttempts: 3,
    lease: null,
    submission: null,
    verifications: [],
    workHolders: [],
    finding: null,
    overridden: null,
    blockedReason: null,
  },
  states: {
    pending: {
      on: {
        DEPS_DONE: { target: 'ready', actions: 'becameReady' },
        CLAIM: { actions: 'refuseNotReady' },
        BLOCK: { target: 'blocked', actions: 'block' },
        CANCEL: { target: 'cancelled' },
      },
    },
    ready: {
      on: {
        DEP_REOPENED: { target: 'pending' },
        CLAIM: [
          { guard: 'forWork', target: 'claimed', actions: ['grantLease', 'emitGranted'] },
          { actions: 'refuseNotReady' },
        ],
        BLOCK: { target: 'blocked', actions: 'block' },
        CANCEL: { target: 'cancelled' },
      },
    },
    claimed: {
      on: {
        CLAIM: { actions: 'refuseNotReady' },
        RENEW: [...HELD, { actions: ['extendLease', 'emitRenewed'] }],
        PROGRESS: [...HELD, { actions: ['extendLease', 'emitRenewed'] }],
        RELEASE: [
          ...HELD,
          { guard: 'depsDone', target: 'ready', actions: ['emitReleased', 'becameReady'] },
          { target: 'pending', actions: ['emitReleased', 'clearLease'] },
        ],
        SUBMIT: [
          ...HELD,
          { guard: 'verifyRequired', target: 'awaiting_verify', actions: ['recordSubmission', 'emitSubmitted'] },
          { target: 'done', actions: ['recordSubmission', 'emitSubmitted'] },
        ],
        EXPIRE: [
          {
            guard: and(['leaseExpired', 'attemptsLeft', 'depsDone']),
            target: 'ready',
            actions: ['emitExpired', 'countAttempt', 'becameReady'],
          },
          {
            guard: and(['leaseExpired', 'attemptsLeft']),
            target: 'pending',
            actions: ['emitExpired', 'countAttempt', 'clearLease'],
          },
          {
            guard: 'leaseExpired',
            target: 'blocked',
            actions: ['emitExpired', 'countAttempt', 'exhausted', 'clearLease'],
          },
        ],
        BLOCK: { target: 'blocked', actions: ['emitRevoked', 'block'] },
        CANCEL: { target: 'cancelled', actions: ['emitRevoked', 'clearLease'] },
      },
    },
    awaiting_verify: {
      on: {
        CLAIM: [
          { guard: 'forWork', actions: 'refuseNotReady' },
          { guard: 'independent', target: 'verifying', actions: ['grantLease', 'emitGranted'] },
          { actions: 'refuseNotIndependent' },
        ],
        SUPERSEDE: [
          { guard: not('isSubmitter'), actions: 'refuseNotSubmitter' },
          { guard: 'sameHead', actions: 'refuseHead' },
          { target: 'awaiting_verify', reenter: true, actions: ['emitSuperseded', 'supersede'] },
        ],
        VERIFY: [...VERDICT_RULES, ...VERDICTS],
        OVERRIDE: { target: 'done', actions: ['override', 'emitOverridden'] },
        BLOCK: { target: 'blocked', actions: 'block' },
        CANCEL: { target: 'cancelled' },
      },
    },
    verifying: {
      on: {
        CLAIM: { actions: 'refuseNotReady' },
        RENEW: [...HELD, { actions: ['extendLease', 'emitRenewed'] }],
        RELEASE: [...HELD, { target: 'awaiting_verify', actions: ['emitReleased', 'clearLease'] }],
        EXPIRE: { guard: 'leaseExpired', target: 'awaiting_verify', actions: ['emitExpired', 'clearLease'] },
        SUPERSEDE: [
          { guard: not('isSubmitter'), actions: 'refuseNotSubmitter' },
          { guard: 'sameHead', actions: 'refuseHead' },
          { target: 'awaiting_verify', actions: ['emitRevoked', 'emitSuperseded', 'supersede'] },
        ],
        VERIFY: [...VERDICT_RULES, ...VERDICTS_OVER_HOLDER, ...VERDICTS],
        OVERRIDE: { target: 'done', actions: ['emitRevoked', 'override', 'emitOverridden'] },
        BLOCK: { target: 'blocked', actions: ['emitRevoked', 'block'] },
        CANCEL: { target: 'cancelled', actions: ['emitRevoked', 'clearLease'] },
      },
    },
    // A claim naming an item no claim can take now is refused as not ready (DOMAIN.md "Claims and
    // leases"), with the item's state, like every other state's: never INVALID_TRANSITION.
    done: {
      on: {
        CLAIM: { actions: 'refuseNotReady' },
        REOPEN: [
          { guard: 'depsDone', target: 'ready', actions: 'reopen' },
          { target: 'pending', actions: 'reopen' },
        ],
      },
    },
    blocked: {
      on: {
        CLAIM: { actions: 'refuseNotReady' },
        UNBLOCK: [
          { guard: 'depsDone', target: 'ready', actions: ['unblock', 'becameReady'] },
          { target: 'pending', actions: 'unblock' },
        ],
        CANCEL: { target: 'cancelled' },
      },
    },
    cancelled: {
      on: {
        CLAIM: { actions: 'refuseNotReady' },
        REOPEN: [
          { guard: 'depsDone', target: 'ready', actions: 'reopen' },
          { target: 'pending', actions: 'reopen' },
        ],
      },
    },
  },
});
