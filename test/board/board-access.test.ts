// Board access decides who may act; it activates a board's actor only when a call reads the
// board here, so a command decided on the board's home (perhaps another node) activates nothing.
import { describe, expect, it } from 'vitest';
import type { BoardRegistry } from '../../actors/registry.js';
import { BoardAccess } from '../../src/board/board-access.js';
import type { RequestContext } from '../../src/request-context.js';

function rig() {
  const activated: string[] = [];
  const registry = { get: (boardId: string) => (activated.push(boardId), { boardId }) } as unknown as BoardRegistry;
  const asked: string[] = [];
  const access = new BoardAccess(registry, { ask: async (boardId) => void asked.push(boardId) });
  const ctx = {
    project: { id: 'b1', name: 'board', role: 'member', plan: 'free', owned: false },
    identity: { kind: 'session', principal: 'user:u1', accountId: 'u1', sessionId: 's1' },
  } as unknown as RequestContext;
  return { access, ctx, activated, asked };
}

describe('BoardAccess', () => {
  it('enters and asks a command without activating the actor here', async () => {
    const { access, ctx, activated, asked } = rig();
    const call = access.enter(ctx, 'member', 'claims', 'W-1');
    await access.ask(call, { kind: 'expire' });
    expect(asked).toEqual(['b1']);
    expect(activated).toEqual([]);
  });

  it('activates the actor when the call reads the board here', async () => {
    const { access, ctx, activated } = rig();
    const call = await access.look(ctx, 'items');
    expect(activated).toEqual([]);
    expect((call.actor as unknown as { boardId: string }).boardId).toBe('b1');
    expect(activated).toEqual(['b1']);
  });

  it('still refuses a role below the one needed', () => {
    const { access, ctx } = rig();
    expect(() => access.enter(ctx, 'admin', 'claims')).toThrow(expect.objectContaining({ code: 'ROLE_REQUIRED' }));
  });
});
