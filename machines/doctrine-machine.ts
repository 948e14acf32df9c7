// A doctrine entry's lifecycle (DOMAIN.md "Doctrine and spec") as an XState 5 machine, used as a
// pure transition function over stored entries like the item machine: members agree, admins
// ratify, reject and set the level, agents take blind tests of ratified entries. Refusals are
// emitted as data with their code. No I/O and no clock: time arrives on events (`now`).
import { assign, emit, setup } from 'xstate';

export const DOCTRINE_STATUSES = ['proposed', 'ratified', 'rejected'] as const;
export type DoctrineStatus = (typeof DOCTRINE_STATUSES)[number];
export const DOCTRINE_LEVELS = ['advisory', 'expected', 'required'] as const;
export type DoctrineLevel = (typeof DOCTRINE_LEVELS)[number];

/** Blind-test results an entry keeps one by one (its counters count them all). */
export const BLIND_TESTS_KEPT = 20;

export interface BlindTestResult {
  by: string;
  result: 'pass' | 'fail';
  at: number;
}

/** The lifecycle part of an entry: the machine's context. */
export interface DoctrineLife {
  level: DoctrineLevel;
  /** One per principal, in the order they agreed. */
  agreements: { by: string; at: number }[];
  /** The answer a blind test must give (`sha256:<64 hex>`); never shown to anyone, only whether it is set. */
  expectedDigest: string | null;
  blindTests: { pass: number; fail: number; recent: BlindTestResult[] };
  rejectedReason: string | null;
}

export type DoctrineEvent =
  | { type: 'AGREE'; principal: string; now: number }
  | { type: 'RATIFY'; expectedDigest?: string; now: number }
  | { type: 'REJECT'; reason?: string; now: number }
  | { type: 'SET_LEVEL'; level: DoctrineLevel; now: number }
  | { type: 'BLIND_TEST'; principal: string; answerDigest: string; now: number };

export type DoctrineEventType = DoctrineEvent['type'];

export type DoctrineRefusalCode = 'DOCTRINE_BLIND_TEST_UNSET';

/** What the machine emits: board events (never a digest), or a refusal. */
export type DoctrineEmitted =
  | { type: 'doctrine.agreed'; by: string }
  | { type: 'doctrine.ratified'; expectedDigestSet: boolean }
  | { type: 'doctrine.rejected'; reason: string | null }
  | { type: 'doctrine.level'; from: DoctrineLevel; to: DoctrineLevel }
  | { type: 'doctrine.blind_test'; by: string; result: 'pass' | 'fail' }
  | { type: 'refused'; code: DoctrineRefusalCode };

type Of<T extends DoctrineEventType> = Extract<DoctrineEvent, { type: T }>;

/** AGREE wherever agreeing is open: a principal's second agreement is taken and changes nothing. */
const AGREE = [{ guard: 'agreed' }, { actions: ['agree', 'emitAgreed'] }] as const;
const SET_LEVEL = [{ guard: 'sameLevel' }, { actions: ['emitLevel', 'setLevel'] }] as const;
const RATIFY = { target: 'ratified', actions: ['ratify', 'emitRatified'] } as const;
const REJECT = { target: 'rejected', actions: ['reject', 'emitRejected'] } as const;

export const doctrineMachine = setup({
  types: { context: {} as DoctrineLife, events: {} as DoctrineEvent, emitted: {} as DoctrineEmitted },
  guards: {
    agreed: ({ context, event }) => context.agreements.some((a) => a.by === (event as Of<'AGREE'>).principal),
    sameLevel: ({ context, event }) => context.level === (event as Of<'SET_LEVEL'>).level,
    digestUnset: ({ context }) => context.expectedDigest === null,
  },
  actions: {
    agree: assign(({ context, event }) => {
      const e = event as Of<'AGREE'>;
      return { agreements: [...context.agreements, { by: e.principal, at: e.now }] };
    }),
    emitAgreed: emit(
      ({ event }) => ({ type: 'doctrine.agreed', by: (event as Of<'AGREE'>).principal }) as DoctrineEmitted,
    ),
    ratify: assign(({ context, event }) => ({
      expectedDigest: (event as Of<'RATIFY'>).expectedDigest ?? context.expectedDigest,
      rejectedReason: null,
    })),
    emitRatified: emit(
      ({ context }) =>
        ({ type: 'doctrine.ratified', expectedDigestSet: context.expectedDigest !== null }) as DoctrineEmitted,
    ),
    reject: assign(({ event }) => ({ rejectedReason: (event as Of<'REJECT'>).reason ?? null })),
    emitRejected: emit(
      ({ context }) => ({ type: 'doctrine.rejected', reason: context.rejectedReason }) as DoctrineEmitted,
    ),
    emitLevel: emit(
      ({ context, event }) =>
        ({ type: 'doctrine.level', from: context.level, to: (event as Of<'SET_LEVEL'>).level }) as DoctrineEmitted,
    ),
    setLevel: assign(({ event }) => ({ level: (event as Of<'SET_LEVEL'>).level })),
    recordBlindTest: assign(({ context, event }) => {
      const e = event as Of<'BLIND_TEST'>;
      const result: BlindTestResult['result'] = e.answerDigest === context.expectedDigest ? 'pass' : 'fail';
      const { pass, fail, recent } = context.blindTests;
      return {
        blindTests: {
          pass: pass + (result === 'pass' ? 1 : 0),
          fail: fail + (result === 'fail' ? 1 : 0),
          recent: [...recent, { by: e.principal, result, at: e.now }].slice(-BLIND_TESTS_KEPT),
        },
      };
    }),
    emitBlindTest: emit(({ context }) => {
      const last = context.blindTests.recent.at(-1)!;
      return { type: 'doctrine.blind_test', by: last.by, result: last.result } as DoctrineEmitted;
    }),
    refuseUnset: emit({ type: 'refused', code: 'DOCTRINE_BLIND_TEST_UNSET' }),
  },
}).createMachine({
  id: 'doctrine',
  initial: 'proposed',
  context: {
    level: 'advisory',
    agreements: [],
    expectedDigest: null,
    blindTests: { pass: 0, fail: 0, recent: [] },
    rejectedReason: null,
  },
  states: {
    proposed: {
      on: { AGREE, RATIFY, REJECT, SET_LEVEL },
    },
    ratified: {
      on: {
        AGREE,
        REJECT,
        SET_LEVEL,
        // The result is recorded first, then emitted from the entry as it ends up.
        BLIND_TEST: [
          { guard: 'digestUnset', actions: 'refuseUnset' },
          { actions: ['recordBlindTest', 'emitBlindTest'] },
        ],
      },
    },
    rejected: {
      on: { RATIFY },
    },
  },
});
