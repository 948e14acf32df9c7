// DOMAIN.md's lifecycle table as (state, event) -> (state, emitted) rows, plus the rules of the
// bullets below it. No server, no mocks: the machine is a pure function.
import { describe, expect, it } from 'vitest';
import { acceptedEvents, initialLife, step } from '../../machines/item-step.js';
import { ITEM_STATES, type ItemEvent, type ItemLife, type ItemState } from '../../machines/item-types.js';

const T0 = 1_000_000;
const HEAD = 'a1b2c3d';
const NEW_HEAD = 'e4f5a6b7';
const lease = (
  holder: string,
  purpose: 'work' | 'verify' = 'work',
  over: Partial<NonNullable<ItemLife['lease']>> = {},
) => ({
  leaseId: `L-${holder}`,
  holder,
  purpose,
  fencingToken: 7,
  grantedAt: T0,
  expiresAt: T0 + 60_000,
  hardExpiresAt: T0 + 24 * 3600_000,
  ttlMs: 60_000,
  ...over,
});

/** A stored item in `state`, as the lifecycle would have left it. */
function item(state: ItemState, over: Partial<ItemLife> = {}): { state: ItemState; life: ItemLife } {
  const life = initialLife(over.verify ?? 'required', 3);
  if (state === 'claimed') Object.assign(life, { lease: lease('agent:w'), workHolders: ['agent:w'] });
  if (state === 'awaiting_verify' || state === 'verifying' || state === 'done')
    Object.assign(life, { submission: { head: HEAD, by: 'agent:w', at: T0 }, workHolders: ['agent:w'] });
  if (state === 'verifying') Object.assign(life, { lease: lease('agent:v', 'verify') });
  return { state, life: { ...life, ...over } };
}

const claim = (principal: string, purpose: 'work' | 'verify' = 'work'): ItemEvent => ({
  type: 'CLAIM',
  principal,
  purpose,
  leaseId: `L-${principal}`,
  fencingToken: 9,
  ttlMs: 60_000,
  now: T0,
});

interface Row {
  from: ItemState;
  over?: Partial<ItemLife>;
  event: ItemEvent;
  to: ItemState | { refused: string } | 'unchanged';
  emits?: string[];
}

// One row per line of DOMAIN.md's table (and each "or" branch).
const TABLE: Row[] = [
  { from: 'pending', event: { type: 'DEPS_DONE' }, to: 'ready' },
  { from: 'ready', event: { type: 'DEP_REOPENED' }, to: 'pending' },
  { from: 'ready', event: claim('agent:w'), to: 'claimed', emits: ['lease.granted'] },
  {
    from: 'claimed',
    event: { type: 'RENEW', leaseId: 'L-agent:w', ttlMs: 60_000, now: T0 + 1000 },
    to: 'claimed',
    emits: ['lease.renewed'],
  },
  {
    from: 'claimed',
    event: { type: 'PROGRESS', leaseId: 'L-agent:w', now: T0 + 1000 },
    to: 'claimed',
    emits: ['lease.renewed'],
  },
  {
    from: 'claimed',
    event: { type: 'RELEASE', leaseId: 'L-agent:w', depsDone: true, now: T0 + 1000 },
    to: 'ready',
    emits: ['lease.released'],
  },
  {
    from: 'claimed',
    event: { type: 'EXPIRE', depsDone: true, now: T0 + 60_000 },
    to: 'ready',
    emits: ['lease.expired'],
  },
  {
    from: 'claimed',
    over: { attempts: 2 },
    event: { type: 'EXPIRE', depsDone: true, now: T0 + 60_000 },
    to: 'blocked',
    emits: ['lease.expired'],
  },
  // A dependency left done (reopened, or added by an edit) while the item was held: the item goes
  // back to pending, not ready, so nobody is handed it before its dependencies are done.
  {
    from: 'claimed',
    event: { type: 'RELEASE', leaseId: 'L-agent:w', depsDone: false, now: T0 + 1000 },
    to: 'pending',
    emits: ['lease.released'],
  },
  {
    from: 'claimed',
    event: { type: 'EXPIRE', depsDone: false, now: T0 + 60_000 },
    to: 'pending',
    emits: ['lease.expired'],
  },
  {
    from: 'claimed',
    over: { attempts: 2 },
    event: { type: 'EXPIRE', depsDone: false, now: T0 + 60_000 },
    to: 'blocked',
    emits: ['lease.expired'],
  },
  ...(['awaiting_verify', 'verifying'] as const).map((from): Row => ({
    from,
    event: {
      type: 'VERIFY',
      principal: 'agent:v',
      head: HEAD,
      verdict: 'fail',
      finding: `sha256:${'f'.repeat(64)}`,
      depsDone: false,
      now: T0,
    },
    to: 'pending',
    emits: ['item.verified'],
  })),
  {
    from: 'claimed',
    over: { verify: 'none' },
    event: { type: 'SUBMIT', leaseId: 'L-agent:w', head: HEAD, now: T0 + 1 },
    to: 'done',
    emits: ['item.submitted'],
  },
  {
    from: 'claimed',
    event: { type: 'SUBMIT', leaseId: 'L-agent:w', head: HEAD, now: T0 + 1 },
    to: 'awaiting_verify',
    emits: ['item.submitted'],
  },
  { from: 'awaiting_verify', event: claim('agent:v', 'verify'), to: 'verifying', emits: ['lease.granted'] },
  {
    from: 'awaiting_verify',
    event: { type: 'SUPERSEDE', principal: 'agent:w', head: NEW_HEAD, now: T0 },
    to: 'awaiting_verify',
    emits: ['item.superseded'],
  },
  {
    from: 'verifying',
    event: { type: 'SUPERSEDE', principal: 'agent:w', head: NEW_HEAD, now: T0 },
    to: 'awaiting_verify',
    emits: ['lease.revoked', 'item.superseded'],
  },
  {
    from: 'awaiting_verify',
    event: {
      type: 'VERIFY',
      principal: 'agent:v',
      head: HEAD,
      verdict: 'pass',
      finding: null,
      depsDone: true,
      now: T0,
    },
    to: 'done',
    emits: ['item.verified'],
  },
  {
    from: 'verifying',
    event: {
      type: 'VERIFY',
      principal: 'agent:v',
      head: HEAD,
      verdict: 'pass',
      finding: null,
      depsDone: true,
      now: T0,
    },
    to: 'done',
    emits: ['item.verified'],
  },
  {
    from: 'awaiting_verify',
    event: {
      type: 'VERIFY',
      principal: 'agent:v',
      head: HEAD,
      verdict: 'fail',
      finding: `sha256:${'f'.repeat(64)}`,
      depsDone: true,
      now: T0,
    },
    to: 'ready',
    emits: ['item.verified'],
  },
  {
    from: 'verifying',
    event: {
      type: 'VERIFY',
      principal: 'agent:v',
      head: HEAD,
      verdict: 'fail',
      finding: `sha256:${'f'.repeat(64)}`,
      depsDone: true,
      now: T0,
    },
    to: 'ready',
    emits: ['item.verified'],
  },
  {
    from: 'verifying',
    event: { type: 'EXPIRE', depsDone: true, now: T0 + 60_000 },
    to: 'awaiting_verify',
    emits: ['lease.expired'],
  },
  ...(['pending', 'ready', 'awaiting_verify'] as const).map((from): Row => ({
    from,
    event: { type: 'BLOCK', reason: 'ops', now: T0 },
    to: 'blocked',
    emits: [],
  })),
  ...(['claimed', 'verifying'] as const).map((from): Row => ({
    from,
    event: { type: 'BLOCK', reason: 'ops', now: T0 },
    to: 'blocked',
    emits: ['lease.revoked'],
  })),
  { from: 'blocked', event: { type: 'UNBLOCK', depsDone: true, now: T0 }, to: 'ready' },
  { from: 'blocked', event: { type: 'UNBLOCK', depsDone: false, now: T0 }, to: 'pending' },
  ...(['pending', 'ready', 'awaiting_verify', 'blocked'] as const).map((from): Row => ({
    from,
    event: { type: 'CANCEL', reason: 'ops', now: T0 },
    to: 'cancelled',
    emits: [],
  })),
  ...(['claimed', 'verifying'] as const).map((from): Row => ({
    from,
    event: { type: 'CANCEL', reason: 'ops', now: T0 },
    to: 'cancelled',
    emits: ['lease.revoked'],
  })),
  ...(['done', 'cancelled'] as const).flatMap((from): Row[] => [
    { from, event: { type: 'REOPEN', depsDone: true, now: T0 }, to: 'ready' },
    { from, event: { type: 'REOPEN', depsDone: false, now: T0 }, to: 'pending' },
  ]),
  {
    from: 'awaiting_verify',
    event: { type: 'OVERRIDE', principal: 'user:op', reason: 'hotfix', now: T0 },
    to: 'done',
    emits: ['item.overridden'],
  },
  {
    from: 'verifying',
    event: { type: 'OVERRIDE', principal: 'user:op', reason: 'hotfix', now: T0 },
    to: 'done',
    emits: ['lease.revoked', 'item.overridden'],
  },
];

// The rules below the table, as refusals.
const REFUSALS: Row[] = [
  {
    from: 'claimed',
    event: { type: 'SUBMIT', leaseId: 'L-stale', head: HEAD, now: T0 + 1 },
    to: { refused: 'LEASE_NOT_HELD' },
  },
  {
    from: 'claimed',
    event: { type: 'SUBMIT', leaseId: 'L-agent:w', head: HEAD, now: T0 + 60_000 },
    to: { refused: 'LEASE_EXPIRED' },
  },
  {
    from: 'claimed',
    event: { type: 'RENEW', leaseId: 'L-other', ttlMs: 1000, now: T0 },
    to: { refused: 'LEASE_NOT_HELD' },
  },
  {
    from: 'claimed',
    event: { type: 'PROGRESS', leaseId: 'L-agent:w', now: T0 + 61_000 },
    to: { refused: 'LEASE_EXPIRED' },
  },
  {
    from: 'claimed',
    event: { type: 'RELEASE', leaseId: 'L-other', depsDone: true, now: T0 },
    to: { refused: 'LEASE_NOT_HELD' },
  },
  { from: 'claimed', event: claim('agent:x'), to: { refused: 'ITEM_NOT_READY' } },
  { from: 'pending', event: claim('agent:x'), to: { refused: 'ITEM_NOT_READY' } },
  { from: 'ready', event: claim('agent:x', 'verify'), to: { refused: 'ITEM_NOT_READY' } },
  { from: 'awaiting_verify', event: claim('agent:x', 'work'), to: { refused: 'ITEM_NOT_READY' } },
  { from: 'verifying', event: claim('agent:x', 'verify'), to: { refused: 'ITEM_NOT_READY' } },
  // A claim naming an item no claim can take is not ready, whatever the state (DOMAIN.md "Claims and leases").
  ...(['done', 'blocked', 'cancelled'] as const).flatMap((from): Row[] => [
    { from, event: claim('agent:x'), to: { refused: 'ITEM_NOT_READY' } },
    { from, event: claim('agent:x', 'verify'), to: { refused: 'ITEM_NOT_READY' } },
  ]),
  { from: 'awaiting_verify', event: claim('agent:w', 'verify'), to: { refused: 'VERIFY_NOT_INDEPENDENT' } },
  {
    from: 'awaiting_verify',
    over: { workHolders: ['agent:w', 'agent:h'] },
    event: claim('agent:h', 'verify'),
    to: { refused: 'VERIFY_NOT_INDEPENDENT' },
  },
  {
    from: 'awaiting_verify',
    event: {
      type: 'VERIFY',
      principal: 'agent:w',
      head: HEAD,
      verdict: 'pass',
      finding: null,
      depsDone: true,
      now: T0,
    },
    to: { refused: 'VERIFY_NOT_INDEPENDENT' },
  },
  {
    from: 'awaiting_verify',
    event: {
      type: 'VERIFY',
      principal: 'agent:v',
      head: NEW_HEAD,
      verdict: 'pass',
      finding: null,
      depsDone: true,
      now: T0,
    },
    to: { refused: 'HEAD_MISMATCH' },
  },
  {
    from: 'awaiting_verify',
    event: {
      type: 'VERIFY',
      principal: 'agent:v',
      head: HEAD,
      verdict: 'fail',
      finding: null,
      depsDone: true,
      now: T0,
    },
    to: { refused: 'FINDING_REQUIRED' },
  },
  {
    from: 'awaiting_verify',
    over: { verifications: [{ by: 'agent:v', head: HEAD, verdict: 'fail', finding: 'sha256:x', at: T0 }] },
    event: {
      type: 'VERIFY',
      principal: 'agent:v',
      head: HEAD,
      verdict: 'pass',
      finding: null,
      depsDone: true,
      now: T0,
    },
    to: { refused: 'EVIDENCE_EXISTS' },
  },
  {
    from: 'awaiting_verify',
    event: { type: 'SUPERSEDE', principal: 'agent:x', head: NEW_HEAD, now: T0 },
    to: { refused: 'NOT_SUBMITTER' },
  },
  {
    from: 'awaiting_verify',
    event: { type: 'SUPERSEDE', principal: 'agent:w', head: HEAD, now: T0 },
    to: { refused: 'HEAD_MISMATCH' },
  },
  { from: 'claimed', event: { type: 'EXPIRE', depsDone: true, now: T0 + 59_999 }, to: 'unchanged' },
  { from: 'verifying', event: { type: 'EXPIRE', depsDone: true, now: T0 + 59_999 }, to: 'unchanged' },
];

function run(row: Row) {
  const { state, life } = item(row.from, row.over);
  return step(state, life, row.event);
}

describe('item lifecycle: DOMAIN.md table', () => {
  it.each(
    TABLE.map(
      (r) =>
        [
          `${r.from} --${r.event.type}${'purpose' in r.event ? `(${r.event.purpose})` : ''}${'depsDone' in r.event ? `(deps ${r.event.depsDone ? 'done' : 'open'})` : ''}--> ${String(r.to)}`,
          r,
        ] as const,
    ),
  )('%s', (_, row) => {
    const result = run(row);
    expect(result.kind).toBe('moved');
    if (result.kind !== 'moved') return;
    expect(result.state).toBe(row.to);
    expect(result.emitted.map((e) => e.type)).toEqual(row.emits ?? []);
  });

  it.each(
    REFUSALS.map(
      (r) =>
        [
          `${r.from} --${r.event.type}${'purpose' in r.event ? `(${r.event.purpose})` : ''}--> ${JSON.stringify(r.to)}`,
          r,
        ] as const,
    ),
  )('%s', (_, row) => {
    const result = run(row);
    if (row.to === 'unchanged') expect(result).toEqual({ kind: 'unchanged' });
    else expect(result).toEqual({ kind: 'refused', code: (row.to as { refused: string }).refused });
  });

  it('answers events a state does not take with the state and the events it does take', () => {
    expect(step('done', item('done').life, { type: 'SUBMIT', leaseId: 'x', head: HEAD, now: T0 })).toEqual({
      kind: 'invalid',
      state: 'done',
      allowed: ['CLAIM', 'REOPEN'],
    });
    expect(step('pending', item('pending').life, { type: 'SUBMIT', leaseId: 'x', head: HEAD, now: T0 })).toMatchObject({
      kind: 'invalid',
      allowed: expect.arrayContaining(['DEPS_DONE', 'CLAIM', 'BLOCK', 'CANCEL']),
    });
    for (const state of ['done', 'cancelled'] as const) expect(acceptedEvents(state)).not.toContain('BLOCK');
    for (const state of ITEM_STATES) expect(acceptedEvents(state).length).toBeGreaterThan(0);
  });
});

describe('item lifecycle: the whole state x event matrix', () => {
  // From DOMAIN.md's table. Beyond it, on purpose: CLAIM is taken in every state (to refuse with
  // ITEM_NOT_READY or VERIFY_NOT_INDEPENDENT, never INVALID_TRANSITION: a named item that cannot be
  // claimed is not ready), and a verifier may RENEW or RELEASE its verify lease.
  const EXPECTED: Record<ItemState, string[]> = {
    pending: ['DEPS_DONE', 'CLAIM', 'BLOCK', 'CANCEL'],
    ready: ['DEP_REOPENED', 'CLAIM', 'BLOCK', 'CANCEL'],
    claimed: ['CLAIM', 'RENEW', 'PROGRESS', 'RELEASE', 'SUBMIT', 'EXPIRE', 'BLOCK', 'CANCEL'],
    awaiting_verify: ['CLAIM', 'SUPERSEDE', 'VERIFY', 'OVERRIDE', 'BLOCK', 'CANCEL'],
    verifying: ['CLAIM', 'RENEW', 'RELEASE', 'EXPIRE', 'SUPERSEDE', 'VERIFY', 'OVERRIDE', 'BLOCK', 'CANCEL'],
    done: ['CLAIM', 'REOPEN'],
    blocked: ['CLAIM', 'UNBLOCK', 'CANCEL'],
    cancelled: ['CLAIM', 'REOPEN'],
  };
  const ALL_EVENTS = [
    'DEPS_DONE',
    'DEP_REOPENED',
    'CLAIM',
    'RENEW',
    'PROGRESS',
    'RELEASE',
    'EXPIRE',
    'SUBMIT',
    'SUPERSEDE',
    'VERIFY',
    'BLOCK',
    'UNBLOCK',
    'CANCEL',
    'REOPEN',
    'OVERRIDE',
  ] as const;

  it.each(ITEM_STATES.map((s) => [s] as const))('%s takes exactly the events of the table', (state) => {
    expect([...acceptedEvents(state)].sort()).toEqual([...EXPECTED[state]].sort());
    for (const type of ALL_EVENTS) {
      const result = step(state, item(state).life, { type, now: T0 } as unknown as ItemEvent);
      if (EXPECTED[state].includes(type)) expect(result.kind, `${state} ${type}`).not.toBe('invalid');
      else expect(result, `${state} ${type}`).toMatchObject({ kind: 'invalid', state });
    }
  });
});

describe('item lifecycle: what each move leaves behind', () => {
  it('a claim grants the lease with the given fencing token and records the work holder', () => {
    const r = step('ready', item('ready').life, claim('agent:w'));
    if (r.kind !== 'moved') throw new Error(r.kind);
    expect(r.life.lease).toMatchObject({
      holder: 'agent:w',
      fencingToken: 9,
      expiresAt: T0 + 60_000,
      hardExpiresAt: T0 + 24 * 3600_000,
    });
    expect(r.life.workHolders).toEqual(['agent:w']);
  });

  it('renewals never pass the 24 h cap from the grant', () => {
    const base = item('claimed', { lease: lease('agent:w', 'work', { hardExpiresAt: T0 + 90_000 }) });
    const r = step(base.state, base.life, { type: 'RENEW', leaseId: 'L-agent:w', ttlMs: 60_000, now: T0 + 50_000 });
    if (r.kind !== 'moved') throw new Error(r.kind);
    expect(r.life.lease!.expiresAt).toBe(T0 + 90_000);
  });

  it('expiry counts an attempt and clears the work holders once ready; a failed verification keeps its finding', () => {
    const expired = step('claimed', item('claimed').life, { type: 'EXPIRE', depsDone: true, now: T0 + 60_000 });
    if (expired.kind !== 'moved') throw new Error(expired.kind);
    expect(expired.life).toMatchObject({ attempts: 1, lease: null, workHolders: [] });
    const finding = `sha256:${'a'.repeat(64)}`;
    const failed = step('awaiting_verify', item('awaiting_verify').life, {
      type: 'VERIFY',
      principal: 'agent:v',
      head: HEAD,
      verdict: 'fail',
      finding,
      depsDone: true,
      now: T0,
    });
    if (failed.kind !== 'moved') throw new Error(failed.kind);
    expect(failed.life).toMatchObject({
      attempts: 1,
      finding,
      verifications: [{ by: 'agent:v', verdict: 'fail', head: HEAD }],
    });
  });

  it('a verdict keeps the evidence digests it was sent, and names none it was not', () => {
    const evidence = [`sha256:${'c'.repeat(64)}`, `sha256:${'d'.repeat(64)}`];
    const verdict = (sent?: string[]): ItemEvent => ({
      type: 'VERIFY',
      principal: 'agent:v',
      head: HEAD,
      verdict: 'pass',
      finding: null,
      ...(sent && { evidence: sent }),
      depsDone: true,
      now: T0,
    });
    const kept = step('awaiting_verify', item('awaiting_verify').life, verdict(evidence));
    if (kept.kind !== 'moved') throw new Error(kept.kind);
    expect(kept.life.verifications).toEqual([
      { by: 'agent:v', head: HEAD, verdict: 'pass', finding: null, at: T0, evidence },
    ]);
    expect(kept.emitted).toEqual([{ type: 'item.verified', verification: kept.life.verifications[0] }]);
    for (const sent of [undefined, []]) {
      const none = step('awaiting_verify', item('awaiting_verify').life, verdict(sent));
      if (none.kind !== 'moved') throw new Error(none.kind);
      expect(none.life.verifications[0]).not.toHaveProperty('evidence');
    }
  });

  it('an override marks the item as having bypassed the gate', () => {
    const r = step('awaiting_verify', item('awaiting_verify').life, {
      type: 'OVERRIDE',
      principal: 'user:op',
      reason: 'hotfix',
      now: T0,
    });
    if (r.kind !== 'moved') throw new Error(r.kind);
    expect(r.life.overridden).toEqual({ by: 'user:op', reason: 'hotfix', at: T0 });
  });

  it('a supersede moves the head and keeps the submitter', () => {
    const r = step('verifying', item('verifying').life, {
      type: 'SUPERSEDE',
      principal: 'agent:w',
      head: NEW_HEAD,
      now: T0 + 5,
    });
    if (r.kind !== 'moved') throw new Error(r.kind);
    expect(r.life).toMatchObject({ submission: { head: NEW_HEAD, by: 'agent:w' }, lease: null });
  });
});

describe('item lifecycle: a verdict over another’s verify lease', () => {
  const verdict = (principal: string, verdict: 'pass' | 'fail'): ItemEvent => ({
    type: 'VERIFY',
    principal,
    head: HEAD,
    verdict,
    finding: verdict === 'fail' ? `sha256:${'b'.repeat(64)}` : null,
    depsDone: true,
    now: T0 + 5,
  });

  it.each([
    ['pass', 'done'],
    ['fail', 'ready'],
  ] as const)('ends the holder’s lease as revoked, reason verified (%s -> %s)', (kind, to) => {
    const r = step('verifying', item('verifying').life, verdict('agent:x', kind));
    if (r.kind !== 'moved') throw new Error(r.kind);
    expect(r.state).toBe(to);
    expect(r.life.lease).toBeNull();
    expect(r.emitted).toEqual([
      { type: 'lease.revoked', lease: lease('agent:v', 'verify'), reason: 'verified' },
      expect.objectContaining({ type: 'item.verified' }),
    ]);
  });

  it('tells nobody when the holder gives the verdict itself', () => {
    const r = step('verifying', item('verifying').life, verdict('agent:v', 'pass'));
    if (r.kind !== 'moved') throw new Error(r.kind);
    expect(r.emitted.map((e) => e.type)).toEqual(['item.verified']);
  });
});
