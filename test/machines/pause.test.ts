// Pausing a board as pure board decisions (DOMAIN.md "Pausing a board"): the flag is board state,
// set idempotently with its event; every command is a row of (command on a paused board) ->
// refused with BOARD_PAUSED, or decided as on a running board; a rewind lands and keeps the pause.
import { describe, expect, it } from 'vitest';
import { boardFrom, withStored, type Board } from '../../machines/board.js';
import { createItems } from '../../machines/board-commands.js';
import { claim, submit } from '../../machines/lease-commands.js';
import { BoardError } from '../../machines/board-error.js';
import { setPaused } from '../../machines/board-pause.js';
import { graphOf, rewind } from '../../machines/restore-point.js';
import { decisionOf, REFUSED_WHILE_PAUSED, type BoardCommand, type CommandKind } from '../../src/board/commands.js';
import type { Decide } from '../../machines/board-decision.js';
import type { PointPorts } from '../../src/board/restore-points.js';
import { emptyBoard } from '../../machines/board.js';
import { fields } from '../board/build.js';

const T0 = Date.UTC(2026, 10, 26, 9);
const TTL = 60_000;
const HEAD = 'abcdef0';
const DIGEST = `sha256:${'d'.repeat(64)}`;

/** W-1 claimed by agent:a (lease-1), W-2 awaiting verification (submitted by agent:a), W-3 ready; a doctrine entry and a clause. */
function working(): Board {
  let board = createItems([fields('claimed'), fields('gated', { verify: 'required' }), fields('ready')], 'user:o')(
    emptyBoard(),
    T0,
  ).board;
  const step = (decide: Decide<unknown>) => (board = decide(board, T0).board);
  step(claim({ principal: 'agent:a', workId: 'W-1', purpose: 'work', ttlMs: TTL, leaseId: 'lease-1' }));
  step(claim({ principal: 'agent:a', workId: 'W-2', purpose: 'work', ttlMs: TTL, leaseId: 'lease-2' }));
  step(submit({ principal: 'agent:a', leaseId: 'lease-2', head: HEAD }));
  step(
    decisionOf(
      {
        kind: 'propose-doctrine',
        input: { slug: 'tests-first', title: 'Tests first', text: 'Write the test first.', expectedDigest: null },
        actor: 'agent:a',
      },
      NO_POINTS,
    ) as Decide<unknown>,
  );
  step(
    decisionOf(
      { kind: 'create-clause', input: { title: 'Clause', text: 'Text.' }, actor: 'user:o' },
      NO_POINTS,
    ) as Decide<unknown>,
  );
  return board;
}

const NO_POINTS = {} as PointPorts;
const decide = (command: BoardCommand) => decisionOf(command, NO_POINTS) as Decide<unknown>;
const paused = (): Board => setPaused(true, 'user:o')(working(), T0 + 1000).board;

/** Commands a paused board refuses, one of each kind and every item event a route sends. */
const REFUSED: [string, BoardCommand][] = [
  [
    'pull-next claim',
    { kind: 'claim', input: { principal: 'agent:b', workId: null, purpose: 'work', ttlMs: TTL, leaseId: 'lease-b' } },
  ],
  [
    'claim repeated by its holder',
    {
      kind: 'claim',
      input: { principal: 'agent:a', workId: 'W-1', purpose: 'work', ttlMs: TTL, leaseId: 'lease-again' },
    },
  ],
  [
    'verify claim',
    {
      kind: 'claim',
      input: { principal: 'agent:c', workId: 'W-2', purpose: 'verify', ttlMs: TTL, leaseId: 'lease-c' },
    },
  ],
  ['submit', { kind: 'submit', input: { principal: 'agent:a', leaseId: 'lease-1', head: HEAD } }],
  [
    'progress',
    { kind: 'progress', input: { principal: 'agent:a', workId: 'W-1', leaseId: 'lease-1', note: 'half way' } },
  ],
  [
    'supersede',
    {
      kind: 'event',
      workId: 'W-2',
      actor: 'agent:a',
      event: { type: 'SUPERSEDE', principal: 'agent:a', head: '1234567' },
    },
  ],
  [
    'verify',
    {
      kind: 'event',
      workId: 'W-2',
      actor: 'agent:c',
      event: { type: 'VERIFY', principal: 'agent:c', head: HEAD, verdict: 'pass', finding: null },
    },
  ],
  ['block', { kind: 'event', workId: 'W-3', actor: 'user:o', event: { type: 'BLOCK', reason: 'wait' } }],
  ['cancel', { kind: 'event', workId: 'W-3', actor: 'user:o', event: { type: 'CANCEL', reason: 'gone' } }],
  ['override', { kind: 'override', workId: 'W-2', principal: 'user:o', reason: 'hotfix' }],
  ['create', { kind: 'create', items: [fields('late')], actor: 'agent:b' }],
  ['edit', { kind: 'patch', workId: 'W-3', changes: { title: 'renamed' }, actor: 'agent:b' }],
  ['reorder', { kind: 'reorder', workIds: ['W-3'], actor: 'user:o' }],
];

/** Commands that go on while the board is paused, with the events each logs there. */
const ALLOWED: [string, BoardCommand, string[]][] = [
  [
    'renew',
    { kind: 'lease', input: { principal: 'agent:a', leaseId: 'lease-1', action: 'renew', ttlMs: null } },
    ['lease.renewed'],
  ],
  [
    'release',
    { kind: 'lease', input: { principal: 'agent:a', leaseId: 'lease-1', action: 'release', ttlMs: null } },
    ['lease.released', 'item.state'],
  ],
  ['comment', { kind: 'comment', workId: 'W-3', text: 'stopping here', actor: 'agent:b' }, ['item.comment']],
  ['expiry', { kind: 'expire' }, []],
  [
    'doctrine proposal',
    {
      kind: 'propose-doctrine',
      input: { slug: 'small-commits', title: 'Small commits', text: 'Keep them small.', expectedDigest: DIGEST },
      actor: 'agent:b',
    },
    ['doctrine.proposed'],
  ],
  [
    'doctrine agreement',
    { kind: 'doctrine', slug: 'tests-first', action: { type: 'AGREE' }, actor: 'agent:b' },
    ['doctrine.agreed'],
  ],
  [
    'spec clause',
    { kind: 'create-clause', input: { title: 'Another', text: 'More.' }, actor: 'user:o' },
    ['spec.created'],
  ],
  [
    'spec edit',
    { kind: 'patch-clause', input: { clauseId: 'S-1', version: 1, title: 'Renamed' }, actor: 'user:o' },
    ['spec.updated'],
  ],
];

function refusal(f: () => unknown): BoardError {
  try {
    f();
  } catch (e) {
    if (e instanceof BoardError) return e;
    throw e;
  }
  throw new Error('accepted');
}

describe('pausing a board', () => {
  it('pauses and resumes idempotently, logging board.paused and board.resumed once each, as board state', () => {
    const running = working();
    expect(running.paused).toBeNull();
    const pause = setPaused(true, 'user:o')(running, T0 + 1000);
    expect(pause.reply).toEqual({
      paused: true,
      pausedBy: 'user:o',
      pausedAt: T0 + 1000,
      changed: true,
      at: T0 + 1000,
      seq: null,
    });
    // Once the actor numbered its event, the reply names it (the audit row's key).
    expect(pause.numbered?.([7])).toMatchObject({ changed: true, seq: 7 });
    expect(pause.events).toEqual([{ type: 'board.paused', actor: 'user:o', workId: null, data: {} }]);
    expect(pause.board).not.toBe(running);
    expect(pause.board.paused).toEqual({ by: 'user:o', at: T0 + 1000 });
    expect([...pause.board.changed]).toEqual([]); // no entry is written: the flag lives in the header
    expect(pause.board.items.size).toBe(running.items.size);

    // A second pause keeps who paused it first and logs nothing.
    const again = setPaused(true, 'user:admin')(pause.board, T0 + 2000);
    expect(again).toEqual({
      board: pause.board,
      events: [],
      reply: { paused: true, pausedBy: 'user:o', pausedAt: T0 + 1000, changed: false, at: T0 + 2000, seq: null },
    });

    const resume = setPaused(false, 'user:admin')(pause.board, T0 + 3000);
    expect(resume.reply).toEqual({
      paused: false,
      pausedBy: null,
      pausedAt: null,
      changed: true,
      at: T0 + 3000,
      seq: null,
    });
    expect(resume.events).toEqual([
      {
        type: 'board.resumed',
        actor: 'user:admin',
        workId: null,
        data: { pausedBy: 'user:o', pausedAt: new Date(T0 + 1000).toISOString() },
      },
    ]);
    expect(resume.board.paused).toBeNull();
    expect(setPaused(false, 'user:o')(resume.board, T0 + 4000)).toMatchObject({
      board: resume.board,
      events: [],
      reply: { changed: false },
    });
  });

  it('names every refused command kind in the table below', () => {
    expect(new Set(REFUSED.map(([, c]) => c.kind))).toEqual(REFUSED_WHILE_PAUSED);
    const all: CommandKind[] = [
      'claim',
      'lease',
      'submit',
      'progress',
      'event',
      'override',
      'create',
      'patch',
      'comment',
      'reorder',
      'expire',
      'propose-doctrine',
      'doctrine',
      'create-clause',
      'patch-clause',
      'pause',
      'rewind',
    ];
    expect(all.filter((k) => !REFUSED_WHILE_PAUSED.has(k)).sort()).toEqual([
      'comment',
      'create-clause',
      'doctrine',
      'expire',
      'lease',
      'patch-clause',
      'pause',
      'propose-doctrine',
      'rewind',
    ]);
  });

  it.each(REFUSED)(
    'refuses %s on a paused board with BOARD_PAUSED, naming who paused it and when',
    (_name, command) => {
      const board = paused();
      // The same command is decided on the running board (it is no refusal of its own).
      expect(() => decide(command)(working(), T0 + 2000)).not.toThrow();
      const e = refusal(() => decide(command)(board, T0 + 2000));
      expect(e.code).toBe('BOARD_PAUSED');
      expect(e.details).toEqual({ pausedBy: 'user:o', pausedAt: new Date(T0 + 1000).toISOString() });
    },
  );

  it.each(ALLOWED)('decides %s on a paused board as on a running one', (_name, command, types) => {
    const board = paused();
    const at = T0 + 2000;
    const onPaused = decide(command)(board, at);
    const onRunning = decide(command)(working(), at);
    expect(onPaused.events.map((e) => e.type)).toEqual(types);
    expect(onPaused.events).toEqual(onRunning.events);
    expect(onPaused.board.paused).toEqual({ by: 'user:o', at: T0 + 1000 });
  });

  it('lets leases keep their deadlines: a lease on a paused board expires when it is due', () => {
    const board = paused();
    const due = decide({ kind: 'expire' })(board, T0 + TTL + 1);
    expect(due.events.map((e) => [e.type, e.workId])).toEqual([
      ['lease.expired', 'W-1'],
      ['item.state', 'W-1'],
    ]);
    expect(due.board.items.get('W-1')).toMatchObject({ state: 'ready', life: { attempts: 1, lease: null } });
    expect(due.board.paused).not.toBeNull();
  });

  it('takes a rewind while paused: the graph is swapped, the leases on replaced items end, the board stays paused', () => {
    const point = graphOf(
      createItems([fields('claimed'), fields('gated', { verify: 'required' }), fields('ready')], 'user:o')(
        emptyBoard(),
        T0,
      ).board,
    );
    const board = paused();
    const swapped = rewind(point, { actor: 'user:o', restorePointId: 'rp_b_3' })(board, T0 + 5000);
    expect(swapped.reply.revokedLeases).toEqual([{ workId: 'W-1', holder: 'agent:a', purpose: 'work' }]);
    expect(swapped.events.map((e) => e.type)).toContain('board.rewound');
    expect(swapped.board.items.get('W-2')).toMatchObject({ state: 'ready' });
    expect(swapped.board.paused).toEqual({ by: 'user:o', at: T0 + 1000 });
    // Still refusing claims after the swap, until resumed.
    expect(refusal(() => decide(REFUSED[0]![1])(swapped.board, T0 + 6000)).code).toBe('BOARD_PAUSED');
    const resumed = setPaused(false, 'user:o')(swapped.board, T0 + 7000).board;
    expect(decide(REFUSED[0]![1])(resumed, T0 + 8000).reply).toMatchObject({ workId: 'W-1', fencingToken: 3 });
  });

  it('is loaded from the stored header and brought up to date from another node’s commit', () => {
    const stored = boardFrom([], 1, 1, [], { by: 'user:o', at: T0 });
    expect(stored.paused).toEqual({ by: 'user:o', at: T0 });
    const running = emptyBoard();
    const seen = withStored(running, [], [], {
      nextWorkSeq: 1,
      nextFencingToken: 1,
      retired: [],
      paused: { by: 'user:o', at: T0 },
    });
    expect(seen.paused).toEqual({ by: 'user:o', at: T0 });
    const resumedElsewhere = withStored(seen, [], [], {
      nextWorkSeq: 1,
      nextFencingToken: 1,
      retired: [],
      paused: null,
    });
    expect(resumedElsewhere.paused).toBeNull();
    // A header that does not say keeps what the board held; the same pause read again is the same board.
    expect(withStored(seen, [], [], { nextWorkSeq: 1, nextFencingToken: 1, retired: [] }).paused).toEqual({
      by: 'user:o',
      at: T0,
    });
    expect(
      withStored(seen, [], [], {
        nextWorkSeq: 1,
        nextFencingToken: 1,
        retired: seen.retired,
        paused: { by: 'user:o', at: T0 },
      }),
    ).toBe(seen);
  });
});
