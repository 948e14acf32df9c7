// A call repeated after its answer was lost (the commit landed; 503 said retry): a submit, a
// release, a verdict or a supersede is answered as the first was and changes nothing, as a
// repeated claim gets its lease back; anything else is still refused, a lease never as revoked.
import { describe, expect, it } from 'vitest';
import { emptyBoard } from '../../machines/board.js';
import { createItems, itemEvent } from '../../machines/board-commands.js';
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

describe('a verdict or a supersede repeated', () => {
  const OTHER = 'abcdef1';
  // W-1 gated, submitted at HEAD by agent:a.
  let gated = run(emptyBoard(), createItems([fields('gated', { verify: 'required' })], 'user:o'), NOW).board;
  gated = run(
    gated,
    claim({ principal: 'agent:a', workId: 'W-1', purpose: 'work', ttlMs: 60_000, leaseId: 'l' }),
    NOW,
  ).board;
  gated = run(gated, submit({ principal: 'agent:a', leaseId: 'l', head: HEAD }), NOW).board;
  const verdict = (verdict: 'pass' | 'fail', finding: string | null = null, by = 'agent:v') =>
    itemEvent('W-1', by, (now) => ({ type: 'VERIFY', principal: by, head: HEAD, verdict, finding, now }));
  const supersede = (head: string, by = 'agent:a') =>
    itemEvent('W-1', by, (now) => ({ type: 'SUPERSEDE', principal: by, head, now }));

  it('a verdict by the same verifier, of the same verdict on the same head, changes nothing', () => {
    for (const [first, state] of [
      [verdict('pass'), 'done'],
      [verdict('fail', 'sha256:f'), 'ready'],
    ] as const) {
      const judged = run(gated, first, NOW).board;
      expect(first(judged, NOW + 1000)).toEqual({ board: judged, events: [], reply: { workId: 'W-1', state } });
    }
  });

  it('another verdict, finding or verifier is no repeat: the machine refuses it as before', () => {
    const passed = run(gated, verdict('pass'), NOW).board;
    for (const again of [verdict('fail', 'sha256:f'), verdict('pass', null, 'agent:w')])
      expect(refusal(() => again(passed, NOW))).toMatchObject({ code: 'INVALID_TRANSITION' });
    const failed = run(gated, verdict('fail', 'sha256:f'), NOW).board;
    expect(refusal(() => verdict('fail', 'sha256:g')(failed, NOW))).toMatchObject({ code: 'INVALID_TRANSITION' });
  });

  it('a verdict on the same head submitted again is no repeat (that evidence exists)', () => {
    let again = run(gated, verdict('fail', 'sha256:f'), NOW).board;
    again = run(
      again,
      claim({ principal: 'agent:a', workId: 'W-1', purpose: 'work', ttlMs: 60_000, leaseId: 'm' }),
      NOW,
    ).board;
    again = run(again, submit({ principal: 'agent:a', leaseId: 'm', head: HEAD }), NOW).board;
    expect(refusal(() => verdict('fail', 'sha256:f')(again, NOW))).toMatchObject({ code: 'EVIDENCE_EXISTS' });
  });

  it('a supersede by the submitter to the head it superseded to changes nothing', () => {
    const superseded = run(gated, supersede(OTHER), NOW).board;
    expect(superseded.items.get('W-1')!.life.submission).toMatchObject({ head: OTHER, supersedes: HEAD });
    expect(supersede(OTHER)(superseded, NOW + 1000)).toEqual({
      board: superseded,
      events: [],
      reply: { workId: 'W-1', state: 'awaiting_verify' },
    });
  });

  it('a supersede naming the head a submit gave, or by another, is refused as before', () => {
    expect(refusal(() => supersede(HEAD)(gated, NOW))).toMatchObject({ code: 'HEAD_MISMATCH' });
    const superseded = run(gated, supersede(OTHER), NOW).board;
    expect(refusal(() => supersede(OTHER, 'agent:b')(superseded, NOW))).toMatchObject({ code: 'NOT_SUBMITTER' });
  });
});
