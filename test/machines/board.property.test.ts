// Random fleets against the pure board: whatever agents and operators do, in any order and at any
// time, the lifecycle's invariants hold.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addItems,
  applyEvent,
  BoardDraft,
  emptyBoard,
  type Board,
  type BoardEvent,
  type ItemChange,
  type ItemFields,
} from '../../machines/board.js';
import { pullNext } from '../../machines/board-queries.js';
import { expectIndexesRebuilt } from './indexes.js';
import { createItems, patchItem, reorder } from '../../machines/board-commands.js';
import { expireDue } from '../../machines/lease-commands.js';
import type { Decide } from '../../machines/board-decision.js';
import { BoardError } from '../../machines/board-error.js';

const AGENTS = ['agent:a', 'agent:b', 'agent:c', 'agent:d'];
const HEADS = ['aaaaaaa', 'bbbbbbb', 'ccccccc'];
const FINDING = `sha256:${'f'.repeat(64)}`;

const fields = (dependsOn: string[], verify: boolean): ItemFields => ({
  title: 't',
  description: '',
  type: 'task',
  priority: 2,
  parentId: null,
  dependsOn,
  verify: verify ? 'required' : 'none',
  maxAttempts: 3,
  criteria: [],
  doctrine: [],
  spec: [],
  labels: [],
});

const graphArb = fc.integer({ min: 2, max: 10 }).chain((n) =>
  fc.tuple(
    ...Array.from({ length: n }, (_, i) =>
      fc.tuple(
        fc.subarray(
          Array.from({ length: i }, (_, j) => j),
          { maxLength: Math.min(3, i) },
        ),
        fc.boolean(),
      ),
    ),
  ),
);

const commandArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('claim' as const),
      agent: fc.nat(3),
      item: fc.option(fc.nat(9), { nil: null }),
      verify: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('submit' as const), agent: fc.nat(3), item: fc.nat(9), head: fc.nat(2) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('verify' as const),
      agent: fc.nat(3),
      item: fc.nat(9),
      pass: fc.boolean(),
      head: fc.nat(2),
      finding: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('supersede' as const), agent: fc.nat(3), item: fc.nat(9), head: fc.nat(2) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('lease' as const),
      agent: fc.nat(3),
      item: fc.nat(9),
      action: fc.constantFrom('RENEW', 'RELEASE', 'PROGRESS'),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 90_000 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('operator' as const),
      item: fc.nat(9),
      action: fc.constantFrom('BLOCK', 'UNBLOCK', 'CANCEL', 'REOPEN', 'OVERRIDE'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('reorder' as const),
      items: fc.array(fc.nat(9), { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('edit' as const),
      item: fc.nat(9),
      deps: fc.array(fc.nat(9), { maxLength: 3 }),
      priority: fc.nat(4),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('create' as const), deps: fc.array(fc.nat(9), { maxLength: 2 }) }),
  },
);

/** Runs a board command as the actor would: a refusal leaves the board as it was. */
function run(board: Board, decide: Decide<unknown>, now: number): Board {
  try {
    return decide(board, now).board;
  } catch (e) {
    if (e instanceof BoardError) return board;
    throw e;
  }
}

describe('board invariants under random fleets', () => {
  it('one holder, rising fencing tokens, only done unlocks (nothing ready on an undone dependency), no unverified done through the gate', () => {
    fc.assert(
      fc.property(graphArb, fc.array(commandArb, { maxLength: 150 }), (graph, commands) => {
        let now = 1_000_000;
        let board: Board = emptyBoard(graph.length + 1);
        const ids = graph.map((_, i) => `W-${i + 1}`);
        const created = new BoardDraft(board);
        addItems(
          created,
          Object.fromEntries(
            graph.map(([deps, verify], i) => [
              ids[i]!,
              fields(
                deps.map((d) => ids[d]!),
                verify,
              ),
            ]),
          ),
          now,
        );
        board = created.finish();
        for (const item of board.items.values())
          if (item.state === 'ready')
            expect(item.dependsOn.every((d) => board.items.get(d)!.state === 'done')).toBe(true);

        const leasesHeld = new Map<string, string>(); // agent|item -> leaseId the agent believes it holds
        let lastToken = 0;
        const apply = (workId: string, event: BoardEvent) => {
          const before = board;
          const draft = new BoardDraft(board);
          const r = applyEvent(draft, workId, event);
          if (!r.ok) return;
          board = draft.finish();
          for (const change of r.changes) check(before, change);
        };
        const check = (before: Board, change: ItemChange) => {
          const item = board.items.get(change.workId)!;
          for (const e of change.emitted) {
            if (e.type === 'lease.granted') {
              expect(e.lease.fencingToken).toBeGreaterThan(lastToken);
              lastToken = e.lease.fencingToken;
            }
          }
          if (change.to === 'ready')
            expect(item.dependsOn.every((d) => board.items.get(d)!.state === 'done')).toBe(true);
          if (
            change.to === 'done' &&
            item.verify === 'required' &&
            change.from !== 'claimed' &&
            !item.life.overridden
          ) {
            const last = item.life.verifications.at(-1)!;
            const prior = before.items.get(change.workId)!.life;
            expect(last.verdict).toBe('pass');
            expect(last.head).toBe(item.life.submission!.head);
            expect(last.by).not.toBe(item.life.submission!.by);
            expect(prior.workHolders).not.toContain(last.by);
          }
          if (change.to === 'done' && item.verify === 'required') expect(change.from === 'claimed').toBe(false);
        };

        for (const c of commands) {
          // Only done satisfies a dependency: nothing is ready (to be handed out) while one is not.
          for (const item of board.items.values())
            if (item.state === 'ready')
              expect(
                item.dependsOn.every((d) => board.items.get(d)!.state === 'done'),
                item.workId,
              ).toBe(true);
          if (c.op === 'tick') {
            now += c.ms;
            board = run(board, expireDue(), now);
            expect(board.index.expiries.minKey()?.[0] ?? Infinity).toBeGreaterThan(now);
            expectIndexesRebuilt(board);
            continue;
          }
          if (c.op === 'reorder') {
            board = run(board, reorder([...new Set(c.items.map((i) => ids[i % ids.length]!))], 'user:op'), now);
            expectIndexesRebuilt(board);
            continue;
          }
          if (c.op === 'edit') {
            const workId = ids[c.item % ids.length]!;
            board = run(
              board,
              patchItem(
                workId,
                { dependsOn: c.deps.map((d) => ids[d % ids.length]!), priority: c.priority },
                undefined,
                'user:op',
              ),
              now,
            );
            expectIndexesRebuilt(board);
            continue;
          }
          if (c.op === 'create') {
            board = run(
              board,
              createItems(
                [
                  {
                    ...fields(
                      c.deps.map((d) => ids[d % ids.length]!),
                      false,
                    ),
                  },
                ],
                'user:op',
              ),
              now,
            );
            expectIndexesRebuilt(board);
            continue;
          }
          if (c.op === 'operator') {
            const workId = ids[c.item % ids.length]!;
            const base = { now, reason: 'ops', depsDone: false, principal: 'user:op' };
            apply(workId, { type: c.action, ...base } as BoardEvent);
            continue;
          }
          const agent = AGENTS[c.agent]!;
          if (c.op === 'claim') {
            const purpose = c.verify ? 'verify' : 'work';
            const target = c.item === null ? pullNext(board, agent, purpose)?.workId : ids[c.item % ids.length];
            if (!target) continue;
            const leaseId = `L${now}-${agent}-${Math.random()}`;
            apply(target, { type: 'CLAIM', principal: agent, purpose, leaseId, fencingToken: 0, ttlMs: 60_000, now });
            if (board.items.get(target)!.life.lease?.leaseId === leaseId) leasesHeld.set(`${agent}|${target}`, leaseId);
            continue;
          }
          // Agents mostly act on what they hold, as real ones do; the rest of the time on anything.
          const held = [...leasesHeld.keys()].filter((k) => k.startsWith(`${agent}|`)).map((k) => k.split('|')[1]!);
          const workId = c.item % 4 !== 0 && held.length ? held[c.item % held.length]! : ids[c.item % ids.length]!;
          const leaseId = leasesHeld.get(`${agent}|${workId}`) ?? 'L-none';
          if (c.op === 'submit') apply(workId, { type: 'SUBMIT', leaseId, head: HEADS[c.head]!, now });
          if (c.op === 'lease')
            apply(
              workId,
              c.action === 'RENEW'
                ? { type: 'RENEW', leaseId, ttlMs: 60_000, now }
                : ({ type: c.action, leaseId, now } as BoardEvent),
            );
          if (c.op === 'supersede') apply(workId, { type: 'SUPERSEDE', principal: agent, head: HEADS[c.head]!, now });
          if (c.op === 'verify')
            apply(workId, {
              type: 'VERIFY',
              principal: agent,
              head: HEADS[c.head]!,
              verdict: c.pass ? 'pass' : 'fail',
              finding: c.finding ? FINDING : null,
              now,
            });

          expectIndexesRebuilt(board);
          for (const item of board.items.values()) {
            const lease = item.life.lease;
            expect(lease !== null).toBe(item.state === 'claimed' || item.state === 'verifying');
            if (item.state === 'claimed') expect(lease!.purpose).toBe('work');
            if (item.state === 'verifying') expect(lease!.purpose).toBe('verify');
          }
        }
      }),
      { numRuns: 400 },
    );
  });
});
