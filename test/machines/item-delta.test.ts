// An event's item patch: over the item as it was, it gives the item as it is, and it names exactly
// the fields whose JSON differs (the rule watchers rely on, checked against JSON texts directly).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addItems, BoardDraft, emptyBoard, type BoardItem } from '../../machines/board.js';
import { itemDelta, publicItem } from '../../machines/item-view.js';

const base = (): BoardItem => {
  const draft = new BoardDraft(emptyBoard(1));
  addItems(
    draft,
    {
      'W-1': {
        title: 't',
        description: '',
        type: 'task',
        priority: 2,
        parentId: null,
        dependsOn: [],
        verify: 'required',
        maxAttempts: 3,
        criteria: [],
        doctrine: [],
        spec: [],
        labels: [],
      },
    },
    1_000,
  );
  return draft.finish().items.get('W-1')!;
};

const words = fc.array(fc.constantFrom('a', 'b', 'c', ''), { maxLength: 3 });
const lease = fc.option(
  fc.record({
    leaseId: fc.constant('L1'),
    holder: fc.constantFrom('agent:a', 'agent:b'),
    purpose: fc.constantFrom('work' as const, 'verify' as const),
    fencingToken: fc.nat(3),
    grantedAt: fc.constant(1),
    expiresAt: fc.nat(5),
    hardExpiresAt: fc.constant(9),
    ttlMs: fc.constant(1),
  }),
  { nil: null },
);
const verifications = fc.array(
  fc.record({
    by: fc.constantFrom('agent:a', 'agent:b'),
    head: fc.constantFrom('aaaaaaa', 'bbbbbbb'),
    verdict: fc.constantFrom('pass' as const, 'fail' as const),
    finding: fc.option(fc.constant('f'), { nil: null }),
    at: fc.nat(3),
  }),
  { maxLength: 2 },
);
const variant = fc.record({
  title: fc.constantFrom('t', 'u'),
  priority: fc.nat(4),
  rank: fc.option(fc.nat(3), { nil: null }),
  labels: words,
  dependsOn: words,
  state: fc.constantFrom('ready', 'claimed', 'done'),
  lease,
  verifications,
  attempts: fc.nat(2),
  progress: fc.option(fc.record({ note: fc.constantFrom('x', 'y'), by: fc.constant('agent:a'), at: fc.nat(3) }), {
    nil: null,
  }),
  updatedAt: fc.nat(3),
  version: fc.nat(3),
});

const itemOf = (from: BoardItem, v: typeof variant extends fc.Arbitrary<infer T> ? T : never): BoardItem => ({
  ...from,
  title: v.title,
  priority: v.priority,
  rank: v.rank,
  labels: v.labels,
  dependsOn: v.dependsOn,
  state: v.state as BoardItem['state'],
  life: { ...from.life, lease: v.lease, verifications: v.verifications, attempts: v.attempts },
  progress: v.progress,
  updatedAt: v.updatedAt,
  version: v.version,
});

describe('itemDelta', () => {
  it('applied over the item as it was gives the item as it is, naming exactly the fields whose JSON changed', () => {
    const start = base();
    fc.assert(
      fc.property(variant, variant, (a, b) => {
        const before = itemOf(start, a);
        const after = itemOf(start, b);
        const delta = itemDelta(before, after);
        const was = publicItem(before) as unknown as Record<string, unknown>;
        const now = publicItem(after) as unknown as Record<string, unknown>;
        expect({ ...was, ...delta }).toEqual(now);
        const differ = Object.keys(now).filter((k) => JSON.stringify(now[k]) !== JSON.stringify(was[k]));
        expect(Object.keys(delta).sort()).toEqual([...new Set(['workId', 'version', 'state', ...differ])].sort());
      }),
      { numRuns: 500 },
    );
  });

  it('is the whole item for a new one', () => {
    const item = base();
    expect(itemDelta(undefined, item)).toEqual(publicItem(item));
  });
});
