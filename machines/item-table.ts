// The hot transitions of the item lifecycle (claim, renew, progress, submit, verify, and the
// DEPS_DONE a completing submit cascades into) as a table of the machine's states, decided
// without XState's interpreter. The machine (item-machine.ts) stays the specification: the
// machine tests hold every row here to it, for every state, event and guard-relevant context.
import type { BoardEmitted, StepResult } from './item-result.js';
import {
  grantedLease,
  verificationOf,
  type ItemEvent,
  type ItemEventType,
  type ItemLife,
  type ItemState,
  type RefusalCode,
} from './item-types.js';

/** The events this table decides, in every state whose machine node takes them. */
export const HOT_EVENTS = ['CLAIM', 'RENEW', 'PROGRESS', 'SUBMIT', 'VERIFY', 'DEPS_DONE'] as const;
type HotType = (typeof HOT_EVENTS)[number];
type Of<T extends ItemEventType> = Extract<ItemEvent, { type: T }>;

type Guard<E> = (life: ItemLife, e: E) => boolean;
/** A transition's assign and emit actions, in the machine's order: emits see the assigns before them. */
type Effect<E> = (life: ItemLife, e: E) => { life: ItemLife; emitted: BoardEmitted[] };
/**
 * One of the machine's guarded transitions for an event, in its order: the first row whose guard
 * passes decides. A refusal row is the machine's `refuse*` emit; a move row's target defaults to
 * the state itself (a targetless transition), and its effect always assigns, so it is a move.
 */
type Row<E> = { when?: Guard<E>; refuse: RefusalCode } | { when?: Guard<E>; to?: ItemState; effect: Effect<E> };

// The machine's guards, of the same names and read the same way.
const not =
  <E>(guard: Guard<E>): Guard<E> =>
  (life, e) =>
    !guard(life, e);
const holds: Guard<ItemEvent> = (life, e) => 'leaseId' in e && life.lease?.leaseId === e.leaseId;
const leaseExpired: Guard<ItemEvent> = (life, e) => life.lease !== null && 'now' in e && e.now >= life.lease.expiresAt;
const verifyRequired: Guard<ItemEvent> = (life) => life.verify === 'required';
const forWork: Guard<Of<'CLAIM'>> = (_, e) => e.purpose === 'work';
const independent: Guard<Of<'CLAIM'> | Of<'VERIFY'>> = (life, e) =>
  e.principal !== life.submission?.by && !life.workHolders.includes(e.principal);
const sameHead: Guard<Of<'VERIFY'>> = (life, e) => e.head === life.submission?.head;
const evidenceExists: Guard<Of<'VERIFY'>> = (life, e) =>
  life.verifications.some((v) => v.by === e.principal && v.head === e.head);
const missingFinding: Guard<Of<'VERIFY'>> = (_, e) => e.verdict === 'fail' && !e.finding;
const passes: Guard<Of<'VERIFY'>> = (_, e) => e.verdict === 'pass';
const depsDone: Guard<Of<'VERIFY'>> = (_, e) => e.depsDone;
const leaseOfOther: Guard<Of<'VERIFY'>> = (life, e) => life.lease !== null && life.lease.holder !== e.principal;
const both =
  <E>(a: Guard<E>, b: Guard<E>): Guard<E> =>
  (life, e) =>
    a(life, e) && b(life, e);

// The machine's action lists, one effect each, named after the transition.
/** grantLease, emitGranted. */
const grant: Effect<Of<'CLAIM'>> = (life, e) => {
  const lease = grantedLease(e);
  const workHolders =
    e.purpose === 'work' && !life.workHolders.includes(e.principal)
      ? [...life.workHolders, e.principal]
      : life.workHolders;
  return { life: { ...life, lease, workHolders }, emitted: [{ type: 'lease.granted', lease }] };
};
/** extendLease, emitRenewed. */
const extend: Effect<Of<'RENEW'> | Of<'PROGRESS'>> = (life, e) => {
  const held = life.lease!;
  const ttlMs = e.type === 'RENEW' ? e.ttlMs : held.ttlMs;
  const lease = { ...held, ttlMs, expiresAt: Math.min(e.now + ttlMs, held.hardExpiresAt) };
  return { life: { ...life, lease }, emitted: [{ type: 'lease.renewed', lease }] };
};
/** recordSubmission, emitSubmitted. */
const submit: Effect<Of<'SUBMIT'>> = (life, e) => {
  const submission = { head: e.head, by: life.lease!.holder, at: e.now };
  return {
    life: { ...life, submission, lease: null, finding: null },
    emitted: [{ type: 'item.submitted', head: submission.head, by: submission.by }],
  };
};
/** recordVerification, emitVerified (a pass). */
const recordVerdict: Effect<Of<'VERIFY'>> = (life, e) => {
  const verification = verificationOf(e);
  return {
    life: {
      ...life,
      verifications: [...life.verifications, verification],
      lease: null,
      finding: e.verdict === 'fail' ? e.finding : life.finding,
    },
    emitted: [{ type: 'item.verified', verification }],
  };
};
/** recordVerification, countAttempt, emitVerified (a fail, its dependencies no longer all done). */
const failVerdict: Effect<Of<'VERIFY'>> = (life, e) => {
  const recorded = recordVerdict(life, e);
  return { life: { ...recorded.life, attempts: recorded.life.attempts + 1 }, emitted: recorded.emitted };
};
/** recordVerification, countAttempt, emitVerified, becameReady (a fail). */
const failVerdictReady: Effect<Of<'VERIFY'>> = (life, e) => {
  const failed = failVerdict(life, e);
  return { life: { ...failed.life, lease: null, workHolders: [] }, emitted: failed.emitted };
};
/** emitRevoked (reason verified: the verify lease's holder is told it ended), then `effect`. */
const overHolder =
  (effect: Effect<Of<'VERIFY'>>): Effect<Of<'VERIFY'>> =>
  (life, e) => {
    const then = effect(life, e);
    return {
      life: then.life,
      emitted: [{ type: 'lease.revoked', lease: life.lease!, reason: 'verified' }, ...then.emitted],
    };
  };
/** becameReady. */
const becameReady: Effect<ItemEvent> = (life) => ({ life: { ...life, lease: null, workHolders: [] }, emitted: [] });

const NOT_READY = [{ refuse: 'ITEM_NOT_READY' }] as const;
/** Every holder operation first refuses a stale or foreign lease id, then an expired lease. */
const HELD = [
  { when: not(holds), refuse: 'LEASE_NOT_HELD' },
  { when: leaseExpired, refuse: 'LEASE_EXPIRED' },
] as const;
const RENEWS: Row<Of<'RENEW'> | Of<'PROGRESS'>>[] = [...HELD, { effect: extend }];
/** A verdict, from awaiting_verify or verifying: the rules refuse first. */
const VERDICT_RULES: Row<Of<'VERIFY'>>[] = [
  { when: not(independent), refuse: 'VERIFY_NOT_INDEPENDENT' },
  { when: not(sameHead), refuse: 'HEAD_MISMATCH' },
  { when: evidenceExists, refuse: 'EVIDENCE_EXISTS' },
  { when: missingFinding, refuse: 'FINDING_REQUIRED' },
];
/** Then pass, or fail back to ready (pending while a dependency is not done). */
const VERDICTS: Row<Of<'VERIFY'>>[] = [
  { when: passes, to: 'done', effect: recordVerdict },
  { when: depsDone, to: 'ready', effect: failVerdictReady },
  { to: 'pending', effect: failVerdict },
];
/** The same verdicts while another holds the verify lease: its holder is told the lease ended. */
const VERDICTS_OVER_HOLDER: Row<Of<'VERIFY'>>[] = [
  { when: both(leaseOfOther, passes), to: 'done', effect: overHolder(recordVerdict) },
  { when: both(leaseOfOther, depsDone), to: 'ready', effect: overHolder(failVerdictReady) },
  { when: leaseOfOther, to: 'pending', effect: overHolder(failVerdict) },
];

type Cells = { [T in HotType]?: Row<Of<T>>[] };

/** State by state, the rows of each hot event the machine's node for that state takes. */
export const ITEM_TABLE: Record<ItemState, Cells> = {
  pending: { CLAIM: [...NOT_READY], DEPS_DONE: [{ to: 'ready', effect: becameReady }] },
  ready: { CLAIM: [{ when: forWork, to: 'claimed', effect: grant }, ...NOT_READY] },
  claimed: {
    CLAIM: [...NOT_READY],
    RENEW: RENEWS,
    PROGRESS: RENEWS,
    SUBMIT: [...HELD, { when: verifyRequired, to: 'awaiting_verify', effect: submit }, { to: 'done', effect: submit }],
  },
  awaiting_verify: {
    CLAIM: [
      { when: forWork, refuse: 'ITEM_NOT_READY' },
      { when: independent, to: 'verifying', effect: grant },
      { refuse: 'VERIFY_NOT_INDEPENDENT' },
    ],
    VERIFY: [...VERDICT_RULES, ...VERDICTS],
  },
  verifying: {
    CLAIM: [...NOT_READY],
    RENEW: RENEWS,
    VERIFY: [...VERDICT_RULES, ...VERDICTS_OVER_HOLDER, ...VERDICTS],
  },
  done: { CLAIM: [...NOT_READY] },
  blocked: { CLAIM: [...NOT_READY] },
  cancelled: { CLAIM: [...NOT_READY] },
};

/**
 * The table's answer for an event the state's machine node takes (item-step checks that first),
 * or undefined when the table holds no row for it: then the machine decides.
 */
export function decideFromTable(state: ItemState, life: ItemLife, event: ItemEvent): StepResult | undefined {
  const rows = (ITEM_TABLE[state] as Partial<Record<ItemEventType, Row<ItemEvent>[]>>)[event.type];
  if (!rows) return undefined;
  for (const row of rows) {
    if (row.when && !row.when(life, event)) continue;
    if ('refuse' in row) return { kind: 'refused', code: row.refuse };
    const { life: next, emitted } = row.effect(life, event);
    return { kind: 'moved', state: row.to ?? state, life: next, emitted };
  }
  return { kind: 'unchanged' };
}
