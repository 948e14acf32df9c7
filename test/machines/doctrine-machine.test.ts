// The doctrine entry's lifecycle (DOMAIN.md "Doctrine and spec") as (status, event) -> (status,
// emitted) rows, the refusals, and the whole status x event matrix. No server, no mocks.
import { describe, expect, it } from 'vitest';
import {
  BLIND_TESTS_KEPT,
  DOCTRINE_STATUSES,
  type DoctrineEvent,
  type DoctrineLife,
  type DoctrineStatus,
} from '../../machines/doctrine-machine.js';
import { doctrineEvents, doctrineStep, initialDoctrineLife } from '../../machines/doctrine-step.js';

const T0 = 1_000_000;
const EXPECTED = `sha256:${'e'.repeat(64)}`;
const OTHER = `sha256:${'0'.repeat(64)}`;

/** A stored entry in `status`, with an expected digest unless told otherwise. */
function entry(
  status: DoctrineStatus,
  over: Partial<DoctrineLife> = {},
): { status: DoctrineStatus; life: DoctrineLife } {
  const life = initialDoctrineLife(EXPECTED);
  if (status !== 'proposed') life.agreements = [{ by: 'agent:a', at: T0 }];
  if (status === 'rejected') life.rejectedReason = 'too vague';
  return { status, life: { ...life, ...over } };
}

const agree = (principal: string): DoctrineEvent => ({ type: 'AGREE', principal, now: T0 + 1 });
const blind = (answerDigest: string, principal = 'agent:t'): DoctrineEvent => ({
  type: 'BLIND_TEST',
  principal,
  answerDigest,
  now: T0 + 2,
});

interface Row {
  from: DoctrineStatus;
  over?: Partial<DoctrineLife>;
  event: DoctrineEvent;
  to: DoctrineStatus | { refused: string } | 'unchanged';
  emits?: string[];
}

const TABLE: Row[] = [
  { from: 'proposed', event: agree('agent:b'), to: 'proposed', emits: ['doctrine.agreed'] },
  { from: 'ratified', event: agree('agent:b'), to: 'ratified', emits: ['doctrine.agreed'] },
  { from: 'proposed', event: { type: 'RATIFY', now: T0 }, to: 'ratified', emits: ['doctrine.ratified'] },
  {
    from: 'proposed',
    event: { type: 'RATIFY', expectedDigest: OTHER, now: T0 },
    to: 'ratified',
    emits: ['doctrine.ratified'],
  },
  { from: 'rejected', event: { type: 'RATIFY', now: T0 }, to: 'ratified', emits: ['doctrine.ratified'] },
  { from: 'proposed', event: { type: 'REJECT', reason: 'no', now: T0 }, to: 'rejected', emits: ['doctrine.rejected'] },
  { from: 'ratified', event: { type: 'REJECT', now: T0 }, to: 'rejected', emits: ['doctrine.rejected'] },
  {
    from: 'proposed',
    event: { type: 'SET_LEVEL', level: 'required', now: T0 },
    to: 'proposed',
    emits: ['doctrine.level'],
  },
  {
    from: 'ratified',
    event: { type: 'SET_LEVEL', level: 'expected', now: T0 },
    to: 'ratified',
    emits: ['doctrine.level'],
  },
  { from: 'ratified', event: blind(EXPECTED), to: 'ratified', emits: ['doctrine.blind_test'] },
  { from: 'ratified', event: blind(OTHER), to: 'ratified', emits: ['doctrine.blind_test'] },
];

const REFUSALS: Row[] = [
  {
    from: 'ratified',
    over: { expectedDigest: null },
    event: blind(EXPECTED),
    to: { refused: 'DOCTRINE_BLIND_TEST_UNSET' },
  },
  // Once per principal: a second agreement is taken and changes nothing.
  { from: 'proposed', over: { agreements: [{ by: 'agent:b', at: T0 }] }, event: agree('agent:b'), to: 'unchanged' },
  { from: 'ratified', event: agree('agent:a'), to: 'unchanged' },
  {
    from: 'ratified',
    over: { level: 'expected' },
    event: { type: 'SET_LEVEL', level: 'expected', now: T0 },
    to: 'unchanged',
  },
];

const run = (row: Row) => {
  const { status, life } = entry(row.from, row.over);
  return doctrineStep(status, life, row.event);
};

describe('doctrine lifecycle: the table', () => {
  it.each(TABLE.map((r) => [`${r.from} --${r.event.type}--> ${String(r.to)}`, r] as const))('%s', (_, row) => {
    const result = run(row);
    expect(result.kind).toBe('moved');
    if (result.kind !== 'moved') return;
    expect(result.status).toBe(row.to);
    expect(result.emitted.map((e) => e.type)).toEqual(row.emits ?? []);
  });

  it.each(REFUSALS.map((r) => [`${r.from} --${r.event.type}--> ${JSON.stringify(r.to)}`, r] as const))(
    '%s',
    (_, row) => {
      const result = run(row);
      if (row.to === 'unchanged') expect(result).toEqual({ kind: 'unchanged' });
      else expect(result).toEqual({ kind: 'refused', code: (row.to as { refused: string }).refused });
    },
  );

  it('answers events a status does not take with the status and the events it does take', () => {
    expect(doctrineStep('rejected', entry('rejected').life, agree('agent:x'))).toEqual({
      kind: 'invalid',
      status: 'rejected',
      allowed: ['RATIFY'],
    });
    expect(doctrineStep('proposed', entry('proposed').life, blind(EXPECTED))).toMatchObject({
      kind: 'invalid',
      status: 'proposed',
      allowed: expect.arrayContaining(['AGREE', 'RATIFY', 'REJECT', 'SET_LEVEL']),
    });
  });
});

describe('doctrine lifecycle: the whole status x event matrix', () => {
  const EXPECTED_EVENTS: Record<DoctrineStatus, string[]> = {
    proposed: ['AGREE', 'RATIFY', 'REJECT', 'SET_LEVEL'],
    ratified: ['AGREE', 'REJECT', 'SET_LEVEL', 'BLIND_TEST'],
    rejected: ['RATIFY'],
  };
  const ALL = ['AGREE', 'RATIFY', 'REJECT', 'SET_LEVEL', 'BLIND_TEST'] as const;
  const sample: Record<(typeof ALL)[number], DoctrineEvent> = {
    AGREE: agree('agent:z'),
    RATIFY: { type: 'RATIFY', now: T0 },
    REJECT: { type: 'REJECT', now: T0 },
    SET_LEVEL: { type: 'SET_LEVEL', level: 'required', now: T0 },
    BLIND_TEST: blind(EXPECTED),
  };

  it.each(DOCTRINE_STATUSES.map((s) => [s] as const))('%s takes exactly the events of the table', (status) => {
    expect([...doctrineEvents(status)].sort()).toEqual([...EXPECTED_EVENTS[status]].sort());
    for (const type of ALL) {
      const result = doctrineStep(status, entry(status).life, sample[type]);
      if (EXPECTED_EVENTS[status].includes(type)) expect(result.kind, `${status} ${type}`).not.toBe('invalid');
      else
        expect(result, `${status} ${type}`).toMatchObject({
          kind: 'invalid',
          status,
          allowed: EXPECTED_EVENTS[status],
        });
    }
  });
});

describe('doctrine lifecycle: what each move leaves behind', () => {
  it('an agreement records the principal once, with its time', () => {
    const r = doctrineStep('proposed', entry('proposed').life, agree('agent:b'));
    if (r.kind !== 'moved') throw new Error(r.kind);
    expect(r.life.agreements).toEqual([{ by: 'agent:b', at: T0 + 1 }]);
    expect(r.emitted).toEqual([{ type: 'doctrine.agreed', by: 'agent:b' }]);
  });

  it('ratifying sets the expected digest when given, keeps it when not, and the event never carries it', () => {
    const set = doctrineStep('proposed', entry('proposed', { expectedDigest: null }).life, {
      type: 'RATIFY',
      expectedDigest: OTHER,
      now: T0,
    });
    if (set.kind !== 'moved') throw new Error(set.kind);
    expect(set.life.expectedDigest).toBe(OTHER);
    expect(set.emitted).toEqual([{ type: 'doctrine.ratified', expectedDigestSet: true }]);
    const kept = doctrineStep('rejected', entry('rejected').life, { type: 'RATIFY', now: T0 });
    if (kept.kind !== 'moved') throw new Error(kept.kind);
    expect(kept.life).toMatchObject({ expectedDigest: EXPECTED, rejectedReason: null });
    const none = doctrineStep('proposed', entry('proposed', { expectedDigest: null }).life, {
      type: 'RATIFY',
      now: T0,
    });
    expect(none).toMatchObject({ kind: 'moved', emitted: [{ type: 'doctrine.ratified', expectedDigestSet: false }] });
  });

  it('a rejection keeps its reason; a level change names both levels', () => {
    const r = doctrineStep('ratified', entry('ratified').life, { type: 'REJECT', reason: 'superseded', now: T0 });
    expect(r).toMatchObject({
      kind: 'moved',
      status: 'rejected',
      life: { rejectedReason: 'superseded' },
      emitted: [{ type: 'doctrine.rejected', reason: 'superseded' }],
    });
    const l = doctrineStep('proposed', entry('proposed').life, { type: 'SET_LEVEL', level: 'required', now: T0 });
    expect(l).toMatchObject({
      kind: 'moved',
      life: { level: 'required' },
      emitted: [{ type: 'doctrine.level', from: 'advisory', to: 'required' }],
    });
  });

  it('a blind test passes when the answer equals the expected digest, fails otherwise, counts both and keeps the last 20', () => {
    const pass = doctrineStep('ratified', entry('ratified').life, blind(EXPECTED, 'agent:p'));
    expect(pass).toMatchObject({
      kind: 'moved',
      life: { blindTests: { pass: 1, fail: 0, recent: [{ by: 'agent:p', result: 'pass', at: T0 + 2 }] } },
      emitted: [{ type: 'doctrine.blind_test', by: 'agent:p', result: 'pass' }],
    });
    const fail = doctrineStep('ratified', entry('ratified').life, blind(OTHER, 'agent:f'));
    expect(fail).toMatchObject({
      kind: 'moved',
      life: { blindTests: { pass: 0, fail: 1 } },
      emitted: [{ type: 'doctrine.blind_test', by: 'agent:f', result: 'fail' }],
    });
    expect(JSON.stringify(fail)).not.toContain(OTHER.slice(7));
    let life = entry('ratified').life;
    for (let i = 0; i < BLIND_TESTS_KEPT + 5; i++) {
      const r = doctrineStep('ratified', life, blind(i % 2 ? EXPECTED : OTHER, `agent:${i}`));
      if (r.kind !== 'moved') throw new Error(r.kind);
      life = r.life;
    }
    expect(life.blindTests).toMatchObject({ pass: 12, fail: 13 });
    expect(life.blindTests.recent).toHaveLength(BLIND_TESTS_KEPT);
    expect(life.blindTests.recent.at(-1)!.by).toBe(`agent:${BLIND_TESTS_KEPT + 4}`);
  });
});
