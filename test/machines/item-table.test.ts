// The table of hot transitions (machines/item-table.ts) held to the XState machine, the
// specification: for every state, every event, and each variation of context and event the
// guards read (lease held, stale or expired, same or other agent, head, verdict, finding, earlier
// evidence, evidence digests sent, dependencies done or not), `step` answers exactly as XState's transition does, to the key order of the life.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptedEvents, initialLife, machineStep, step } from '../../machines/item-step.js';
import { decideFromTable, HOT_EVENTS, ITEM_TABLE } from '../../machines/item-table.js';
import {
  ITEM_STATES,
  type ItemEvent,
  type ItemEventType,
  type ItemLife,
  type ItemState,
  type Lease,
} from '../../machines/item-types.js';

const T0 = 1_000_000;
const TTL = 60_000;
const [H, H2] = ['a1b2c3d', 'e4f5a6b7'];
/** W worked and submitted, B also held a work lease, V verifies, X is a stranger to the item. */
const [W, B, V, X] = ['agent:w', 'agent:b', 'agent:v', 'agent:x'];
const DIGEST = `sha256:${'f'.repeat(64)}`;
const isHot = (type: ItemEventType) => (HOT_EVENTS as readonly string[]).includes(type);

const lease = (holder: string, purpose: Lease['purpose'], hardExpiresAt = T0 + 24 * 3600_000): Lease => ({
  leaseId: `L-${holder}`,
  holder,
  purpose,
  fencingToken: 7,
  grantedAt: T0,
  expiresAt: T0 + TTL,
  hardExpiresAt,
  ttlMs: TTL,
});

/** The context's guard-relevant variations, in every combination (the state is varied apart). */
function lives(): ItemLife[] {
  const out: ItemLife[] = [];
  for (const verify of ['none', 'required'] as const)
    for (const attempts of [0, 2])
      for (const held of [null, lease(W, 'work'), lease(V, 'verify'), lease(W, 'work', T0 + 90_000)])
        for (const submission of [null, { head: H, by: W, at: T0 }])
          for (const workHolders of [[], [W], [W, B]])
            for (const [verifications, finding] of [
              [[], null],
              [[{ by: V, head: H, verdict: 'fail', finding: DIGEST, at: T0 }], DIGEST],
              [[{ by: V, head: H2, verdict: 'pass', finding: null, at: T0 }], null],
            ] as const)
              out.push({
                ...initialLife(verify, 3),
                attempts,
                lease: held,
                submission,
                workHolders,
                verifications: [...verifications],
                finding,
              });
  return out;
}

/** Each event type's guard-relevant variations, and each bare (`{ type, now }`, as the matrix test sends). */
function events(): ItemEvent[] {
  const out: ItemEvent[] = [];
  const at = [T0 + 1000, T0 + TTL, T0 + TTL + 1000]; // live, at expiry, past it
  const leaseIds = [`L-${W}`, `L-${V}`, 'L-stale'];
  const principals = [W, B, V, X];
  for (const principal of principals)
    for (const purpose of ['work', 'verify'] as const)
      out.push({ type: 'CLAIM', principal, purpose, leaseId: 'L-new', fencingToken: 9, ttlMs: TTL, now: T0 + 1000 });
  for (const leaseId of leaseIds)
    for (const now of at) {
      for (const ttlMs of [TTL, 3600_000]) out.push({ type: 'RENEW', leaseId, ttlMs, now });
      out.push({ type: 'PROGRESS', leaseId, now }, { type: 'SUBMIT', leaseId, head: H2, now });
      for (const depsDone of [true, false]) out.push({ type: 'RELEASE', leaseId, depsDone, now });
    }
  for (const principal of principals)
    for (const head of [H, H2])
      for (const [verdict, finding] of [
        ['pass', null],
        ['fail', null],
        ['fail', ''],
        ['fail', DIGEST],
      ] as const)
        for (const depsDone of [true, false])
          out.push({ type: 'VERIFY', principal, head, verdict, finding, depsDone, now: T0 + 2000 });
  for (const evidence of [[], [DIGEST]])
    out.push({
      type: 'VERIFY',
      principal: X,
      head: H,
      verdict: 'pass',
      finding: null,
      evidence,
      depsDone: true,
      now: T0,
    });
  for (const principal of [W, X])
    for (const head of [H, H2]) out.push({ type: 'SUPERSEDE', principal, head, now: T0 + 2000 });
  out.push({ type: 'DEPS_DONE' }, { type: 'DEP_REOPENED' });
  for (const now of [T0 + TTL - 1, T0 + TTL])
    for (const depsDone of [true, false]) out.push({ type: 'EXPIRE', depsDone, now });
  for (const depsDone of [true, false])
    out.push({ type: 'UNBLOCK', depsDone, now: T0 }, { type: 'REOPEN', depsDone, now: T0 });
  out.push(
    { type: 'BLOCK', reason: 'ops', now: T0 },
    { type: 'CANCEL', reason: 'ops', now: T0 },
    { type: 'OVERRIDE', principal: 'user:op', reason: 'hotfix', now: T0 },
  );
  const types = new Set(out.map((e) => e.type));
  for (const type of types) out.push({ type, now: T0 + 1000 } as unknown as ItemEvent);
  return out;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** An answer as text: key order and undefined fields count, and a throw is an answer too. */
function answer(decide: () => unknown): string {
  try {
    return JSON.stringify(decide(), (_, v: unknown) => (v === undefined ? '<undefined>' : v));
  } catch {
    return 'throws';
  }
}

/** Steps every (life, event) in `state` through the machine and through step / the table. */
function compare(state: ItemState, allLives: ItemLife[], allEvents: ItemEvent[]) {
  const mismatches: string[] = [];
  let cases = 0;
  let byTable = 0;
  const accepted = acceptedEvents(state);
  for (const life of allLives)
    for (const event of allEvents) {
      cases++;
      const machine = answer(() => machineStep(state, life, event));
      const stepped = answer(() => step(state, life, event));
      const tabled = isHot(event.type) && accepted.includes(event.type);
      if (tabled) byTable++;
      const table = tabled ? answer(() => decideFromTable(state, life, event)) : machine;
      if (stepped !== machine || table !== machine)
        mismatches.push(
          `${state} ${JSON.stringify(event)} ${JSON.stringify(life)}:\n  machine ${machine}\n  step    ${stepped}\n  table   ${table}`,
        );
    }
  return { mismatches: mismatches.slice(0, 5), cases, byTable };
}

describe('the hot-transition table against the XState machine', () => {
  it('holds rows for exactly the hot events each state takes, and no others', () => {
    for (const state of ITEM_STATES) {
      const expected = HOT_EVENTS.filter((type) => acceptedEvents(state).includes(type));
      expect(Object.keys(ITEM_TABLE[state]).sort(), state).toEqual([...expected].sort());
    }
    // The claim -> submit -> verify path is all the table's.
    expect(ITEM_TABLE.ready.CLAIM && ITEM_TABLE.claimed.SUBMIT && ITEM_TABLE.awaiting_verify.VERIFY).toBeTruthy();
  });

  const allLives = lives().map(deepFreeze);
  const allEvents = events().map(deepFreeze);
  it.each(ITEM_STATES.map((s) => [s] as const))(
    '%s: every event in every context answers as the machine does',
    (state) => {
      const { mismatches, cases, byTable } = compare(state, allLives, allEvents);
      expect(mismatches).toEqual([]);
      expect(cases).toBe(allLives.length * allEvents.length);
      // Every state takes CLAIM, so the table decides there whatever else it holds.
      expect(byTable).toBeGreaterThan(0);
    },
    30_000,
  );

  it('answers as the machine does for arbitrary lives and events', () => {
    const principal = fc.constantFrom(W, B, V, X);
    const head = fc.constantFrom(H, H2);
    const time = fc.integer({ min: T0 - 1000, max: T0 + 3 * TTL });
    const leaseArb = fc.record({
      leaseId: fc.constantFrom(`L-${W}`, `L-${V}`),
      holder: principal,
      purpose: fc.constantFrom('work' as const, 'verify' as const),
      fencingToken: fc.nat(),
      grantedAt: fc.constant(T0),
      expiresAt: time,
      hardExpiresAt: time,
      ttlMs: fc.integer({ min: 1000, max: 2 * TTL }),
    });
    const lifeArb = fc.record({
      verify: fc.constantFrom('none' as const, 'required' as const),
      attempts: fc.nat({ max: 4 }),
      maxAttempts: fc.integer({ min: 1, max: 4 }),
      lease: fc.option(leaseArb, { nil: null }),
      submission: fc.option(fc.record({ head, by: principal, at: time }), { nil: null }),
      verifications: fc.array(
        fc.record({
          by: principal,
          head,
          verdict: fc.constantFrom('pass' as const, 'fail' as const),
          finding: fc.option(fc.constant(DIGEST), { nil: null }),
          at: time,
        }),
        { maxLength: 3 },
      ),
      workHolders: fc.uniqueArray(principal, { maxLength: 3 }),
      finding: fc.option(fc.constant(DIGEST), { nil: null }),
      overridden: fc.constant(null),
      blockedReason: fc.constant(null),
    });
    const eventArb: fc.Arbitrary<ItemEvent> = fc.oneof(
      fc.record({
        type: fc.constant('CLAIM' as const),
        principal,
        purpose: fc.constantFrom('work' as const, 'verify' as const),
        leaseId: fc.constantFrom('L-new', `L-${W}`),
        fencingToken: fc.nat(),
        ttlMs: fc.integer({ min: 1000, max: 2 * TTL }),
        now: time,
      }),
      fc.record({
        type: fc.constant('RENEW' as const),
        leaseId: fc.constantFrom(`L-${W}`, `L-${V}`, 'L-stale'),
        ttlMs: fc.integer({ min: 1000, max: 3600_000 }),
        now: time,
      }),
      fc.record({
        type: fc.constant('PROGRESS' as const),
        leaseId: fc.constantFrom(`L-${W}`, `L-${V}`, 'L-stale'),
        now: time,
      }),
      fc.record({
        type: fc.constant('RELEASE' as const),
        leaseId: fc.constantFrom(`L-${W}`, `L-${V}`, 'L-stale'),
        depsDone: fc.boolean(),
        now: time,
      }),
      fc.record({
        type: fc.constant('SUBMIT' as const),
        leaseId: fc.constantFrom(`L-${W}`, `L-${V}`, 'L-stale'),
        head,
        now: time,
      }),
      fc.record({
        type: fc.constant('VERIFY' as const),
        principal,
        head,
        verdict: fc.constantFrom('pass' as const, 'fail' as const),
        finding: fc.constantFrom(null, '', DIGEST),
        evidence: fc.constantFrom<string[] | undefined>(undefined, [], [DIGEST]),
        depsDone: fc.boolean(),
        now: time,
      }),
      fc.record({ type: fc.constant('SUPERSEDE' as const), principal, head, now: time }),
      fc.record({ type: fc.constant('EXPIRE' as const), depsDone: fc.boolean(), now: time }),
      fc.constantFrom<ItemEvent>({ type: 'DEPS_DONE' }, { type: 'DEP_REOPENED' }),
    );
    fc.assert(
      fc.property(fc.constantFrom(...ITEM_STATES), lifeArb, eventArb, (state, life, event) => {
        const machine = answer(() => machineStep(state, life, event));
        expect(answer(() => step(state, life, event))).toBe(machine);
        expect(answer(() => decideFromTable(state, life, event) ?? machineStep(state, life, event))).toBe(machine);
      }),
      { numRuns: 3000 },
    );
  });
});
