// Restore points and rewind as pure functions: the graph a point holds, its canonical form, the
// preview's diff, slices and their scope rules, and the rewind decision on boards built by the
// board's own commands.
import { describe, expect, it } from 'vitest';
import { emptyBoard, type Board } from '../../machines/board.js';
import { expectIndexesRebuilt } from './indexes.js';
import {
  createItems,
  itemEvent,
  patchItem,
  reorder,
  type ItemPatch,
  type NewItem,
} from '../../machines/board-commands.js';
import { claim, leaseAction, progress, submit } from '../../machines/lease-commands.js';
import type { Decide, Decision, NewEvent } from '../../machines/board-decision.js';
import { foldStats } from '../../machines/board-stats.js';
import {
  canonicalJson,
  checkSlice,
  diffGraphs,
  diffSlice,
  graphOf,
  rewind,
  RewindError,
  sliceOf,
  type RestoreGraph,
  type RestoreItem,
} from '../../machines/restore-point.js';
import { fields } from '../board/build.js';

const T0 = Date.UTC(2026, 10, 22, 12);
const HEAD = 'abcdef0';

/** A board driven by the pure commands, one second between commands. */
class Fleet {
  now = T0;
  private leases = 0;
  constructor(public board: Board = emptyBoard()) {}

  do<R>(decide: Decide<R>): Decision<R> {
    this.now += 1000;
    const decision = decide(this.board, this.now);
    this.board = decision.board;
    return decision;
  }

  create(...items: NewItem[]): string[] {
    return this.do(createItems(items, 'user:o')).reply.map((i) => i.workId);
  }

  claim(workId: string, principal: string, purpose: 'work' | 'verify' = 'work'): string {
    const leaseId = `lease-${++this.leases}`;
    this.do(claim({ principal, workId, purpose, ttlMs: 60_000, leaseId }));
    return leaseId;
  }

  /** Claims for work and submits. */
  finish(workId: string, principal = 'agent:a'): void {
    this.do(submit({ principal, leaseId: this.claim(workId, principal), head: HEAD }));
  }

  patch(workId: string, changes: ItemPatch): void {
    this.do(patchItem(workId, changes, undefined, 'user:o'));
  }

  state(workId: string): string | undefined {
    return this.board.items.get(workId)?.state;
  }
}

const item = (title: string, over: Partial<NewItem> = {}): NewItem => fields(title, over);
const json = (board: Board) => canonicalJson(graphOf(board));

/** Every object's keys in reverse order, arrays kept: the same value written another way. */
const reversedKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(reversedKeys)
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value)
            .reverse()
            .map(([k, v]) => [k, reversedKeys(v)]),
        )
      : value;

function refusal(f: () => unknown): { code: string; message: string } | 'accepted' {
  try {
    f();
    return 'accepted';
  } catch (e) {
    if (e instanceof RewindError) return { code: e.code, message: e.message };
    throw e;
  }
}

/** W-1 (epic) ⊃ W-2 ⊃ W-3, W-1 ⊃ W-4; W-5 outside, W-6 under W-5. */
function tree(): Fleet {
  const fleet = new Fleet();
  fleet.create(
    item('root', { type: 'epic' }),
    item('child', { parentId: 'W-1', verify: 'required' }),
    item('grandchild', { parentId: 'W-2' }),
    item('second child', { parentId: 'W-1' }),
    item('outside'),
    item('outside child', { parentId: 'W-5' }),
  );
  return fleet;
}

describe('canonical JSON', () => {
  it('is the same for the same graph whatever its key and item order, compact, keys sorted, items in work-id order', () => {
    const fleet = new Fleet();
    fleet.create(...Array.from({ length: 11 }, (_, i) => item(`item ${i + 1}`, { labels: ['b', 'a'] })));
    fleet.finish('W-2');
    const graph = graphOf(fleet.board);
    const shuffled: RestoreGraph = { items: [...graph.items].reverse().map((i) => reversedKeys(i) as RestoreItem) };
    expect(Object.keys(shuffled.items[0]!)[0]).not.toBe(Object.keys(graph.items[0]!)[0]);
    const text = canonicalJson(graph);
    expect(canonicalJson(shuffled)).toBe(text);

    expect(text).toBe(JSON.stringify(JSON.parse(text))); // no whitespace beyond what JSON needs
    const parsed = JSON.parse(text) as { items: { workId: string; labels: string[] }[] };
    expect(parsed.items.map((i) => i.workId)).toEqual(Array.from({ length: 11 }, (_, i) => `W-${i + 1}`)); // W-2 before W-10
    expect(parsed.items[0]!.labels).toEqual(['b', 'a']); // arrays are data: their order is kept
    const sortedEverywhere = (v: unknown): boolean =>
      Array.isArray(v)
        ? v.every(sortedEverywhere)
        : v !== null && typeof v === 'object'
          ? Object.keys(v).join() === Object.keys(v).sort().join() && Object.values(v).every(sortedEverywhere)
          : true;
    expect(sortedEverywhere(parsed)).toBe(true);
    expect(text).toContain('"submission":{"at":');

    fleet.patch('W-3', { title: 'another' });
    expect(json(fleet.board)).not.toBe(text);
  });
});

describe('graphOf', () => {
  it('counts a claimed item as ready and a verifying one as awaiting_verify, and holds no lease', () => {
    const fleet = tree();
    const work = fleet.claim('W-3', 'agent:a');
    fleet.do(progress({ principal: 'agent:a', workId: 'W-3', leaseId: work, note: 'halfway' }));
    fleet.finish('W-2', 'agent:a');
    const verify = fleet.claim('W-2', 'agent:v', 'verify');
    expect([fleet.state('W-2'), fleet.state('W-3')]).toEqual(['verifying', 'claimed']);

    const graph = graphOf(fleet.board);
    const byId = new Map(graph.items.map((i) => [i.workId, i]));
    expect(byId.get('W-3')).toMatchObject({ state: 'ready', workHolders: [], attempts: 0 });
    expect(byId.get('W-2')).toMatchObject({
      state: 'awaiting_verify',
      workHolders: ['agent:a'],
      submission: { head: HEAD, by: 'agent:a' },
    });
    for (const i of graph.items)
      for (const key of ['lease', 'life', 'progress', 'endedLeases', 'version', 'updatedAt', 'readyAt'])
        expect(i, `${i.workId}.${key}`).not.toHaveProperty(key);
    expect(canonicalJson(graph)).not.toContain('lease-');

    // The same graph once both leases are given back: leases and versions do not count.
    const held = canonicalJson(graph);
    fleet.do(leaseAction({ principal: 'agent:a', leaseId: work, action: 'release', ttlMs: null }));
    fleet.do(leaseAction({ principal: 'agent:v', leaseId: verify, action: 'release', ttlMs: null }));
    expect([fleet.state('W-2'), fleet.state('W-3')]).toEqual(['awaiting_verify', 'ready']);
    expect(json(fleet.board)).toBe(held);
  });
});

describe('rewind and undo', () => {
  it('a rewind then its undo point gives back the same graph, leases and all moved on', () => {
    const fleet = tree();
    const point = graphOf(fleet.board);
    fleet.create(item('later', { parentId: 'W-4', dependsOn: ['W-5'] }), item('later too'));
    fleet.finish('W-5');
    fleet.finish('W-2');
    fleet.claim('W-2', 'agent:v', 'verify');
    fleet.claim('W-7', 'agent:b');
    fleet.claim('W-8', 'agent:c');
    fleet.patch('W-1', { title: 'renamed', labels: ['x'] });
    fleet.do(reorder(['W-6', 'W-3'], 'user:o'));
    fleet.do(itemEvent('W-4', 'user:o', (now) => ({ type: 'BLOCK', reason: 'waiting', now })));

    const undo = graphOf(fleet.board);
    const rewound = fleet.do(rewind(point, { actor: 'user:o', restorePointId: 'rp_b_5' }));
    expect(json(fleet.board)).toBe(canonicalJson(point));
    expect(rewound.reply.revokedLeases.map((l) => l.workId)).toEqual(['W-2', 'W-7', 'W-8']);
    expectIndexesRebuilt(fleet.board);

    fleet.do(rewind(undo, { actor: 'user:o', restorePointId: 'rp_b_9' }));
    expect(json(fleet.board)).toBe(canonicalJson(undo));
    expect([fleet.state('W-2'), fleet.state('W-7'), fleet.state('W-8')]).toEqual(['awaiting_verify', 'ready', 'ready']);
    expect(fleet.board.index.leases.size).toBe(0);
    expectIndexesRebuilt(fleet.board);
  });

  it('an item the rewind removed comes back with its undo at a version above every one it had', () => {
    const fleet = new Fleet();
    const empty = graphOf(fleet.board);
    fleet.create(item('spec the API'));
    for (const title of ['v2', 'v3', 'v4']) fleet.patch('W-1', { title });
    expect(fleet.board.items.get('W-1')!.version).toBe(4);
    const undo = graphOf(fleet.board);
    fleet.do(rewind(empty, { actor: 'user:o', restorePointId: 'rp_b_1' }));
    expect(fleet.board.items.has('W-1')).toBe(false);
    expect(fleet.board.removedVersion).toBe(4);

    fleet.do(rewind(undo, { actor: 'user:o', restorePointId: 'rp_b_9' }));
    const back = fleet.board.items.get('W-1')!;
    expect([back.title, back.version]).toEqual(['v4', 5]);
    // A writer that read W-1 at version 1 is refused, as it would have been before the rewind.
    expect(() => fleet.do(patchItem('W-1', { title: 'stale' }, 1, 'agent:stale'))).toThrow(
      expect.objectContaining({ code: 'VERSION_MISMATCH' }),
    );
  });
});

describe('the rewind in the metrics', () => {
  it('marks the state moves a rewind and its undo make, so rewinding back and forth counts nothing done', () => {
    const fleet = new Fleet();
    fleet.create(item('one'));
    let stats = foldStats(undefined, [], fleet.board);
    const fold = (events: NewEvent[]) =>
      (stats = foldStats(
        stats,
        events.map((e) => ({ ...e, at: fleet.now })),
        fleet.board,
      ));
    fleet.claim('W-1', 'agent:a');
    const leaseId = 'lease-1';
    fold(fleet.do(submit({ principal: 'agent:a', leaseId, head: HEAD })).events);
    const finished = graphOf(fleet.board);
    fleet.do(itemEvent('W-1', 'user:o', (now) => ({ type: 'REOPEN', depsDone: true, now })));
    const reopened = graphOf(fleet.board);
    for (let i = 0; i < 3; i++) {
      const back = fleet.do(rewind(finished, { actor: 'user:o', restorePointId: 'rp_b_4' }));
      expect(back.events.find((e) => e.type === 'item.state')?.data).toMatchObject({
        from: 'ready',
        to: 'done',
        rewound: true,
      });
      fold(back.events);
      fold(fleet.do(rewind(reopened, { actor: 'user:o', restorePointId: 'rp_b_6' })).events);
    }
    expect(Object.values(stats.days).reduce((n, d) => n + d.done, 0)).toBe(1);
  });
});

describe('diffGraphs', () => {
  it('lists added, removed and changed items with the changed fields, in work-id order', () => {
    const fleet = tree();
    const point = graphOf(fleet.board);
    fleet.patch('W-1', { title: 'renamed' });
    fleet.claim('W-4', 'agent:a'); // a lease alone changes nothing
    fleet.finish('W-3');
    fleet.create(item('new'), item('newer'));
    const current = graphOf(fleet.board);

    expect(diffGraphs(current, point)).toEqual({
      added: [],
      removed: ['W-7', 'W-8'],
      changed: [
        { workId: 'W-1', fields: ['title'] },
        { workId: 'W-3', fields: ['state', 'submission', 'workHolders'] },
      ],
    });
    expect(diffGraphs(point, current)).toMatchObject({ added: ['W-7', 'W-8'], removed: [] });
    expect(diffGraphs(current, current)).toEqual({ added: [], removed: [], changed: [] });

    const one = point.items[0]!;
    const numbered = (seqs: number[]): RestoreGraph => ({ items: seqs.map((n) => ({ ...one, workId: `W-${n}` })) });
    expect(diffGraphs(numbered([1]), numbered([10, 2, 1, 30]))).toEqual({
      added: ['W-2', 'W-10', 'W-30'],
      removed: [],
      changed: [],
    });
  });
});

describe('diffSlice', () => {
  it('compares a slice with every item its apply replaces: one moved out of the subtree is changed, not added', () => {
    const fleet = tree();
    const point = graphOf(fleet.board);
    fleet.patch('W-4', { parentId: 'W-5' }); // W-4 leaves W-1's subtree
    fleet.patch('W-3', { title: 'renamed' });
    const before = graphOf(fleet.board);
    const slice = sliceOf(point, 'W-1')!;

    const preview = diffSlice(before, slice, 'W-1');
    expect(preview).toEqual({
      added: [],
      removed: [],
      changed: [
        { workId: 'W-3', fields: ['title'] },
        { workId: 'W-4', fields: ['parentId'] },
      ],
    });
    // What the apply then does to the board is what the preview said.
    fleet.do(rewind(point, { actor: 'user:o', restorePointId: 'rp_b_1', slice: 'W-1' }));
    expect(diffGraphs(before, graphOf(fleet.board))).toEqual(preview);
  });
});

describe('sliceOf', () => {
  it('holds the root, its children and grandchildren; null when the point lacks the root', () => {
    const graph = graphOf(tree().board);
    const ids = (g: RestoreGraph | null) => g?.items.map((i) => i.workId);
    expect(ids(sliceOf(graph, 'W-1'))).toEqual(['W-1', 'W-2', 'W-3', 'W-4']);
    expect(ids(sliceOf(graph, 'W-2'))).toEqual(['W-2', 'W-3']);
    expect(ids(sliceOf(graph, 'W-3'))).toEqual(['W-3']);
    expect(ids(sliceOf(graph, 'W-5'))).toEqual(['W-5', 'W-6']);
    expect(sliceOf(graph, 'W-9')).toBeNull();
  });
});

describe('checkSlice', () => {
  it('refuses a restored item depending on or parented under an item that would not exist', () => {
    const fleet = tree();
    const early = graphOf(fleet.board);
    fleet.create(item('later'));
    fleet.patch('W-2', { dependsOn: ['W-7'] });
    fleet.patch('W-5', { parentId: 'W-7' });
    const late = graphOf(fleet.board);
    fleet.do(rewind(early, { actor: 'user:o', restorePointId: 'rp_b_1' })); // W-7 is gone
    const current = graphOf(fleet.board);
    expect(checkSlice(current, sliceOf(late, 'W-1')!)).toMatch(/W-2 depends on W-7, which would not exist/);
    expect(checkSlice(current, sliceOf(late, 'W-5')!)).toMatch(/W-5 is parented under W-7, which would not exist/);
    expect(
      refusal(() => rewind(late, { actor: 'user:o', restorePointId: 'rp_b_2', slice: 'W-1' })(fleet.board, fleet.now)),
    ).toMatchObject({ code: 'REWIND_SLICE_SCOPE' });
  });

  it('refuses a slice that would close a dependency cycle', () => {
    const fleet = tree();
    fleet.patch('W-3', { dependsOn: ['W-5'] });
    const point = graphOf(fleet.board);
    fleet.patch('W-3', { dependsOn: [] });
    fleet.patch('W-5', { dependsOn: ['W-3'] });
    expect(checkSlice(graphOf(fleet.board), sliceOf(point, 'W-1')!)).toMatch(/would form a cycle/);
  });

  it('refuses a slice removing an item that a current item outside it depends on', () => {
    const fleet = tree();
    const point = graphOf(fleet.board);
    fleet.create(item('later', { parentId: 'W-2' }));
    fleet.patch('W-6', { dependsOn: ['W-7'] });
    expect(checkSlice(graphOf(fleet.board), sliceOf(point, 'W-1')!)).toBe(
      'W-6 depends on W-7, which the slice removes.',
    );
    expect(
      refusal(() => rewind(point, { actor: 'user:o', restorePointId: 'rp_b_1', slice: 'W-1' })(fleet.board, fleet.now)),
    ).toEqual({ code: 'REWIND_SLICE_SCOPE', message: 'W-6 depends on W-7, which the slice removes.' });
  });

  it('accepts a slice that fits, removing what it does not hold', () => {
    const fleet = tree();
    const point = graphOf(fleet.board);
    fleet.create(item('later', { parentId: 'W-3' }), item('later outside', { dependsOn: ['W-5'] }));
    fleet.patch('W-2', { title: 'renamed', dependsOn: ['W-8'] });
    expect(checkSlice(graphOf(fleet.board), sliceOf(point, 'W-1')!)).toBeNull();
    fleet.do(rewind(point, { actor: 'user:o', restorePointId: 'rp_b_1', slice: 'W-1' }));
    expect(diffGraphs(graphOf(fleet.board), point)).toEqual({ added: [], removed: ['W-8'], changed: [] });
    expect(fleet.board.items.has('W-7')).toBe(false);
    expect(
      refusal(() => rewind(point, { actor: 'user:o', restorePointId: 'rp_b_1', slice: 'W-9' })(fleet.board, fleet.now)),
    ).toMatchObject({ code: 'INVALID_REWIND_SLICE' });
  });
});

describe('the rewind decision', () => {
  it('ends the leases on replaced items (renew says rewound), keeps the others, and keeps the indexes right', () => {
    const fleet = tree();
    const point = graphOf(fleet.board);
    const replacedLease = fleet.claim('W-2', 'agent:a');
    const untouchedLease = fleet.claim('W-5', 'agent:b');
    fleet.patch('W-3', { title: 'changed' });
    const blocked = new Fleet(fleet.board)
      .do(itemEvent('W-2', 'user:o', (now) => ({ type: 'BLOCK', reason: 'x', now })))
      .events.find((e) => e.type === 'lease.revoked')!;
    const token = fleet.board.nextFencingToken;

    const decision = fleet.do(rewind(point, { actor: 'user:o', restorePointId: 'rp_b_3', slice: 'W-1' }));
    expect(decision.reply).toEqual({
      revokedLeases: [{ workId: 'W-2', holder: 'agent:a', purpose: 'work' }],
      after: canonicalJson(graphOf(fleet.board)),
    });
    const [revoked, moved, rewound, ...rest] = decision.events;
    expect(rest).toEqual([]);
    // Both carry W-2's patch, as every decision's item events do: the lease gone, ready, a version on.
    const patch = { workId: 'W-2', version: fleet.board.items.get('W-2')!.version, state: 'ready', lease: null };
    expect(revoked).toEqual({
      type: 'lease.revoked',
      actor: 'user:o',
      workId: 'W-2',
      data: { lease: { ...(blocked.data.lease as object) }, reason: 'rewound', item: expect.objectContaining(patch) },
    });
    expect(moved).toEqual({
      type: 'item.state',
      actor: 'user:o',
      workId: 'W-2',
      data: { from: 'claimed', to: 'ready', rewound: true, item: expect.objectContaining(patch) },
    });
    expect(moved!.data.item).toEqual(revoked!.data.item);
    expect(rewound).toEqual({
      type: 'board.rewound',
      actor: 'user:o',
      workId: null,
      data: { restorePointId: 'rp_b_3', slice: 'W-1', counts: { added: 0, removed: 0, changed: 1, revokedLeases: 1 } },
    });
    expect(JSON.stringify(decision.events)).not.toContain('lease-');

    expect(fleet.state('W-2')).toBe('ready');
    expect(fleet.board.items.get('W-3')!.title).toBe('grandchild');
    expect(
      fleet.do(leaseAction({ principal: 'agent:a', leaseId: replacedLease, action: 'renew', ttlMs: null })).reply,
    ).toEqual({ workId: 'W-2', action: 'renew', lease: null, revoked: true, reason: 'rewound' });
    expect(fleet.state('W-5')).toBe('claimed');
    expect(
      fleet.do(leaseAction({ principal: 'agent:b', leaseId: untouchedLease, action: 'renew', ttlMs: null })).reply
        .lease,
    ).toMatchObject({ workId: 'W-5', leaseId: untouchedLease });
    expect(fleet.board.nextFencingToken).toBe(token);
    expectIndexesRebuilt(fleet.board);
  });

  it('never lowers the work-id or fencing counters; removed items lose their leases', () => {
    const fleet = tree();
    const point = graphOf(fleet.board);
    fleet.create(item('later'), item('later too'));
    const removedLease = fleet.claim('W-7', 'agent:a');
    fleet.finish('W-2');
    const verify = fleet.claim('W-2', 'agent:v', 'verify');
    const { nextWorkSeq, nextFencingToken } = fleet.board;
    expect([nextWorkSeq, nextFencingToken]).toEqual([9, 4]);

    const decision = fleet.do(rewind(point, { actor: 'user:o', restorePointId: 'rp_b_1' }));
    expect(decision.reply.revokedLeases).toEqual([
      { workId: 'W-2', holder: 'agent:v', purpose: 'verify' },
      { workId: 'W-7', holder: 'agent:a', purpose: 'work' },
    ]);
    expect(decision.events.map((e) => [e.type, e.workId, e.data.to])).toEqual([
      ['lease.revoked', 'W-2', undefined],
      ['item.state', 'W-2', 'ready'],
      ['lease.revoked', 'W-7', undefined],
      ['board.rewound', null, undefined],
    ]);
    // A kept item's events carry its patch; the removed W-7's none (GET answers 404 for it), nor does board.rewound.
    const patches = decision.events.map((e) => e.data.item as { state: string; lease: null } | undefined);
    expect(patches.map((p) => p && [p.state, p.lease])).toEqual([
      ['ready', null],
      ['ready', null],
      undefined,
      undefined,
    ]);
    expect(decision.events.at(-1)!.data.items).toBeUndefined();
    expect(decision.events.at(-1)!.data.counts).toEqual({ added: 0, removed: 2, changed: 1, revokedLeases: 2 });
    expect([...fleet.board.changed]).toEqual(expect.arrayContaining(['W-7', 'W-8']));
    expect([fleet.board.items.has('W-7'), fleet.board.items.has('W-8')]).toEqual([false, false]);
    expect([fleet.board.nextWorkSeq, fleet.board.nextFencingToken]).toEqual([nextWorkSeq, nextFencingToken]);
    expect(
      fleet.do(leaseAction({ principal: 'agent:v', leaseId: verify, action: 'renew', ttlMs: null })).reply,
    ).toMatchObject({ revoked: true, reason: 'rewound' });
    // The removed item's holder learns why too, from the board's memory of removed items' leases.
    expect(fleet.board.retired).toEqual([{ leaseId: removedLease, workId: 'W-7', reason: 'rewound' }]);
    expect(
      fleet.do(leaseAction({ principal: 'agent:a', leaseId: removedLease, action: 'renew', ttlMs: null })).reply,
    ).toEqual({ workId: 'W-7', action: 'renew', lease: null, revoked: true, reason: 'rewound' });
    expectIndexesRebuilt(fleet.board);

    expect(fleet.create(item('after the rewind'))).toEqual(['W-9']);
    fleet.claim('W-9', 'agent:a');
    expect(fleet.board.items.get('W-9')!.life.lease!.fencingToken).toBe(nextFencingToken);
    expectIndexesRebuilt(fleet.board);
  });

  it('recomputes pending and ready from the dependencies, for restored and untouched items alike', () => {
    const fleet = tree();
    fleet.patch('W-6', { parentId: null, dependsOn: ['W-1'] }); // outside the slice, waits on its root
    fleet.patch('W-3', { dependsOn: ['W-5'] }); // inside, waits on an outside item
    fleet.finish('W-5');
    expect([fleet.state('W-3'), fleet.state('W-6')]).toEqual(['ready', 'pending']);
    const point = graphOf(fleet.board); // W-1 ready, W-3 ready (W-5 done)

    fleet.finish('W-1');
    expect(fleet.state('W-6')).toBe('ready');
    fleet.do(itemEvent('W-5', 'user:o', (now) => ({ type: 'REOPEN', depsDone: true, now })));
    expect(fleet.state('W-3')).toBe('pending');

    const versions = () => ['W-3', 'W-4', 'W-6'].map((id) => fleet.board.items.get(id)!.version);
    const [w3, w4, w6] = versions();
    fleet.do(rewind(point, { actor: 'user:o', restorePointId: 'rp_b_2', slice: 'W-1' }));
    expect(versions()).toEqual([w3! + 1, w4, w6! + 1]); // each written item bumps once; W-4 is as it was
    expect(fleet.state('W-1')).toBe('ready');
    expect(fleet.state('W-3')).toBe('pending'); // ready in the point, but W-5 is no longer done
    expect(fleet.state('W-6')).toBe('pending'); // untouched, but its dependency is no longer done
    expectIndexesRebuilt(fleet.board);
  });

  it('refuses a board whose graph moved since the caller checked it, and takes a lease change as no move', () => {
    const fleet = tree();
    const point = graphOf(fleet.board);
    fleet.patch('W-3', { title: 'changed' });
    const seen = canonicalJson(graphOf(fleet.board));
    fleet.claim('W-5', 'agent:a'); // a claim does not change the graph a fingerprint covers
    const decision = fleet.do(rewind(point, { actor: 'user:o', restorePointId: 'rp_b_1', expected: seen }));
    expect(decision.reply.revokedLeases).toEqual([{ workId: 'W-5', holder: 'agent:a', purpose: 'work' }]);
    fleet.patch('W-3', { title: 'changed again' });
    const stale = seen;
    const board = fleet.board;
    expect(
      refusal(() => rewind(point, { actor: 'user:o', restorePointId: 'rp_b_1', expected: stale })(board, fleet.now)),
    ).toMatchObject({ code: 'REWIND_VERSION_MISMATCH' });
  });
});
