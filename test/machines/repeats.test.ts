// A holder's call repeated after its answer was lost (the commit landed; 503 said retry): a submit
// or a release is answered as the first was and changes nothing, as a repeated claim gets its
// lease back; anything else on that lease is still refused, and never as a revocation.
import { describe, expect, it } from 'vitest';
import { emptyBoard } from '../../machines/board.js';
import { createItems } from '../../machines/board-commands.js';
import { claim, leaseAction, submit } from '../../machines/lease-commands.js';
import { BoardError } from '../../machines/board-error.js';
import { boardWith, fields, run } from '../board/build.js';

const NOW = Date.UTC(2026, 11, 1, 12);
const HEAD = 'abcdef0';
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof BoardError) return { code: e.code, details: e.details };
    throw e;
  }
  return 'accepted';
};

describe('a submit repeated', () => {
  // W-1 submitted by agent:a under lease-1 (verify none: done).
  const board = boardWith(NOW, 2, 1, 1);

  it('by its principal with the same head is answered as the first was, changing nothing', () => {
    const again = submit({ principal: 'agent:a', leaseId: 'lease-1', head: HEAD })(board, NOW + 1000);
    expect(again).toEqual({ board, events: [], reply: { workId: 'W-1', state: 'done' } });
  });

  it('with another head, or by another principal, is refused as a lease no longer held (not revoked)', () => {
    for (const [principal, head] of [
      ['agent:a', 'abcdef1'],
      ['agent:b', HEAD],
    ] as const)
      expect(refusal(() => submit({ principal, leaseId: 'lease-1', head })(board, NOW))).toEqual({
        code: 'LEASE_NOT_HELD',
        details: { workId: 'W-1' },
      });
  });

  it('answers the item as it now stands (awaiting its verdict)', () => {
    let gated = run(emptyBoard(), createItems([fields('gated', { verify: 'required' })], 'user:o'), NOW).board;
    gated = run(
      gated,
      claim({ principal: 'agent:a', workId: 'W-1', purpose: 'work', ttlMs: 60_000, leaseId: 'l' }),
      NOW,
    ).board;
    gated = run(gated, submit({ principal: 'agent:a', leaseId: 'l', head: HEAD }), NOW).board;
    expect(submit({ principal: 'agent:a', leaseId: 'l', head: HEAD })(gated, NOW).reply).toEqual({
      workId: 'W-1',
      state: 'awaiting_verify',
    });
    // Renewing the lease that submitted is refused: the holder ended it, nobody revoked it.
    expect(
      refusal(() => leaseAction({ principal: 'agent:a', leaseId: 'l', action: 'renew', ttlMs: null })(gated, NOW)),
    ).toEqual({ code: 'LEASE_NOT_HELD', details: { workId: 'W-1' } });
  });
});

describe('a release repeated', () => {
  const released = run(
    boardWith(NOW, 1, 1),
    leaseAction({ principal: 'agent:a', leaseId: 'lease-1', action: 'release', ttlMs: null }),
    NOW,
  ).board;

  it('is answered as the first was, changing nothing', () => {
    const again = leaseAction({ principal: 'agent:a', leaseId: 'lease-1', action: 'release', ttlMs: null })(
      released,
      NOW + 1000,
    );
    expect(again).toEqual({
      board: released,
      events: [],
      reply: { workId: 'W-1', action: 'release', lease: null },
    });
  });

  it('lets nothing else through on that lease', () => {
    expect(
      refusal(() =>
        leaseAction({ principal: 'agent:a', leaseId: 'lease-1', action: 'renew', ttlMs: null })(released, NOW),
      ),
    ).toEqual({ code: 'LEASE_NOT_HELD', details: { workId: 'W-1' } });
    expect(refusal(() => submit({ principal: 'agent:a', leaseId: 'lease-1', head: HEAD })(released, NOW))).toEqual({
      code: 'LEASE_NOT_HELD',
      details: { workId: 'W-1' },
    });
  });

  it('keeps one ending by its holder per item: the next replaces it', () => {
    let board = released;
    for (const n of [2, 3, 4, 5, 6, 7]) {
      board = run(
        board,
        claim({ principal: 'agent:a', workId: 'W-1', purpose: 'work', ttlMs: 60_000, leaseId: `again-${n}` }),
        NOW,
      ).board;
      board = run(
        board,
        leaseAction({ principal: 'agent:a', leaseId: `again-${n}`, action: 'release', ttlMs: null }),
        NOW,
      ).board;
    }
    expect(board.items.get('W-1')!.endedLeases).toEqual([{ leaseId: 'again-7', reason: 'released' }]);
  });
});
