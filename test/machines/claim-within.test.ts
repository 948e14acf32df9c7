// Decisions for a principal limited to some work ids (a resource token naming items): pull-next
// picks among them in chain order, and no lease outside them is renewed, released or submitted.
import { describe, expect, it } from 'vitest';
import { reorder } from '../../machines/board-commands.js';
import { claim, leaseAction, submit } from '../../machines/lease-commands.js';
import { BoardError } from '../../machines/board-error.js';
import { boardWith } from '../board/build.js';

const NOW = Date.UTC(2026, 10, 22, 12);
const pull = (within: string[] | null, principal = 'agent:r') =>
  claim({ principal, workId: null, purpose: 'work', ttlMs: 60_000, leaseId: `lease-${principal}`, within });
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof BoardError) return e.code;
    throw e;
  }
  return 'accepted';
};

describe('a principal limited to work ids', () => {
  const board = reorder(['W-4', 'W-3'], 'user:o')(boardWith(NOW, 4), NOW).board; // chain: W-4, W-3, W-1, W-2

  it('pulls the first of its items in chain order, or nothing', () => {
    expect(pull(['W-2', 'W-3'])(board, NOW).reply.workId).toBe('W-3');
    expect(pull(['W-1', 'W-2'])(board, NOW).reply.workId).toBe('W-1');
    expect(pull(null)(board, NOW).reply.workId).toBe('W-4');
    expect(code(() => pull(['W-9'])(board, NOW))).toBe('NOTHING_READY');
  });

  it('is refused an item outside them, named or by lease', () => {
    expect(
      code(() =>
        claim({ principal: 'agent:r', workId: 'W-1', purpose: 'work', ttlMs: 60_000, leaseId: 'l', within: ['W-2'] })(
          board,
          NOW,
        ),
      ),
    ).toBe('PROJECT_SCOPE_DENIED');
    const held = pull(null)(board, NOW).board; // agent:r holds W-4 under lease-agent:r
    for (const action of ['renew', 'release'] as const) {
      expect(
        code(() =>
          leaseAction({ principal: 'agent:r', leaseId: 'lease-agent:r', action, ttlMs: null, within: ['W-2'] })(
            held,
            NOW,
          ),
        ),
      ).toBe('PROJECT_SCOPE_DENIED');
      expect(
        code(() =>
          leaseAction({ principal: 'agent:r', leaseId: 'lease-agent:r', action, ttlMs: null, within: ['W-4'] })(
            held,
            NOW,
          ),
        ),
      ).toBe('accepted');
    }
    expect(
      code(() =>
        submit({ principal: 'agent:r', leaseId: 'lease-agent:r', head: 'abcdef0', within: ['W-2'] })(held, NOW),
      ),
    ).toBe('PROJECT_SCOPE_DENIED');
    expect(
      code(() =>
        submit({ principal: 'agent:r', leaseId: 'lease-agent:r', head: 'abcdef0', within: ['W-4'] })(held, NOW),
      ),
    ).toBe('accepted');
  });
});
