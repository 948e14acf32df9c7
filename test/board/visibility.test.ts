// The one visibility rule (src/board/visibility.ts) as a table: who sees which items, events,
// shouts and reads of a board.
import { describe, expect, it } from 'vitest';
import type { Identity, TokenIdentity } from '../../src/auth/identity.js';
import { boardViewOf, eventAsSeen, mayRead, seesShout, seesWholeBoard } from '../../src/board/visibility.js';

const session: Identity = { kind: 'session', principal: 'user:u', accountId: 'a', sessionId: 's' };
const token = (scope: TokenIdentity['scope'], resources: string[] | null = null): Identity => ({
  kind: 'token',
  principal: 'agent:r',
  accountId: 'a',
  tokenId: 't',
  agentId: 'r',
  scope,
  prefix: 'p',
  boardId: 'b',
  role: 'member',
  resources,
});

const patch = (workId: string) => ({ workId, version: 2, state: 'ready' });
const events = {
  mine: { type: 'item.state', workId: 'W-1', data: { from: 'ready', to: 'claimed', item: patch('W-1') } },
  other: { type: 'item.state', workId: 'W-2', data: { from: 'ready', to: 'claimed', item: patch('W-2') } },
  paused: { type: 'board.paused', workId: null, data: {} },
  rewound: {
    type: 'board.rewound',
    workId: null,
    data: { restorePointId: 'rp_b_1', counts: { added: 0 }, items: [patch('W-1'), patch('W-2')] },
  },
  reorderBoth: {
    type: 'items.reordered',
    workId: null,
    data: { order: ['W-2', 'W-1'], items: [patch('W-2'), patch('W-1')] },
  },
  reorderOther: { type: 'items.reordered', workId: null, data: { order: ['W-2'], items: [patch('W-2')] } },
  rewoundOther: {
    type: 'board.rewound',
    workId: null,
    data: { restorePointId: 'rp_b_1~W-2', slice: 'W-2', counts: { added: 0, changed: 1 } },
  },
  rewoundMine: {
    type: 'board.rewound',
    workId: null,
    data: { restorePointId: 'rp_b_1~W-1', slice: 'W-1', counts: { added: 0, changed: 1 } },
  },
  imported: { type: 'board.imported', workId: null, data: { from: 'old', items: 2, events: 3 } },
  doctrine: { type: 'doctrine.proposed', workId: null, data: { entry: { slug: 'x' } } },
  spec: { type: 'spec.created', workId: null, data: { clause: { clauseId: 'S-1' } } },
};

describe('what a principal sees of a board', () => {
  it('gives sessions, workspace and account tokens the whole board; direct shouts of others to admins and owners only', () => {
    for (const [identity, role, allDirect] of [
      [session, 'owner', true],
      [session, 'admin', true],
      [session, 'viewer', false],
      [token('workspace'), 'member', false],
      [token('account'), 'owner', true],
      [session, 'operator', true],
    ] as const) {
      const view = boardViewOf(identity, role);
      expect(seesWholeBoard(view)).toBe(true);
      expect(view.allDirect).toBe(allDirect);
      for (const e of Object.values(events)) expect(eventAsSeen(view, e)).toBe(e);
    }
  });

  it('gives a token naming work ids its items’ events, board-level events without others’ patches, and no doctrine, spec or roster', () => {
    const view = boardViewOf(token('resource', ['W-1']), 'member');
    expect(seesWholeBoard(view)).toBe(false);
    expect(eventAsSeen(view, events.mine)).toBe(events.mine);
    expect(eventAsSeen(view, events.other)).toBeNull();
    expect(eventAsSeen(view, events.paused)).toBe(events.paused);
    expect(eventAsSeen(view, events.imported)).toBe(events.imported);
    expect(eventAsSeen(view, events.rewound)).toEqual({
      ...events.rewound,
      data: { restorePointId: 'rp_b_1', counts: { added: 0 }, items: [patch('W-1')] },
    });
    expect(eventAsSeen(view, events.reorderBoth)).toEqual({
      ...events.reorderBoth,
      data: { order: ['W-1'], items: [patch('W-1')] },
    });
    expect(eventAsSeen(view, events.reorderOther)).toBeNull();
    // A slice's root is an item like any other: named only to a view that sees it.
    expect(eventAsSeen(view, events.rewoundMine)).toBe(events.rewoundMine);
    expect(eventAsSeen(view, events.rewoundOther)).toEqual({
      ...events.rewoundOther,
      data: { restorePointId: 'rp_b_1', counts: { added: 0, changed: 1 } },
    });
    expect(JSON.stringify(eventAsSeen(view, events.rewoundOther))).not.toContain('W-2');
    expect([eventAsSeen(view, events.doctrine), eventAsSeen(view, events.spec)]).toEqual([null, null]);
    expect([
      mayRead(view, 'items'),
      mayRead(view, 'items', 'W-1'),
      mayRead(view, 'items', 'W-2'),
      mayRead(view, 'log'),
      mayRead(view, 'shouts'),
      mayRead(view, 'shouts', 'W-2'),
      mayRead(view, 'roster'),
    ]).toEqual([true, true, false, true, true, false, false]);
  });

  it('lets a token’s groups open their part whole: items or history every item, shouts every shout, status the roster', () => {
    const history = boardViewOf(token('resource', ['history']), 'member');
    expect(eventAsSeen(history, events.other)).toBe(events.other);
    expect(seesShout(history, { from: 'agent:x', to: null, workId: 'W-9' })).toBe(true);
    const shouts = boardViewOf(token('resource', ['shouts', 'W-1']), 'member');
    expect(seesShout(shouts, { from: 'agent:x', to: null, workId: 'W-9' })).toBe(true);
    expect(eventAsSeen(shouts, events.other)).toBeNull();
    const status = boardViewOf(token('resource', ['status']), 'member');
    expect([mayRead(status, 'roster'), mayRead(status, 'items')]).toEqual([true, false]);
    const doctrine = boardViewOf(token('resource', ['doctrine', 'spec']), 'member');
    expect([eventAsSeen(doctrine, events.doctrine), eventAsSeen(doctrine, events.spec)]).toEqual([
      events.doctrine,
      events.spec,
    ]);
  });

  it('tells a holder of its own lease’s events on an item it does not see, without the item’s patch', () => {
    const revoked = (holder: string) => ({
      type: 'lease.revoked',
      workId: 'W-2',
      data: { lease: { holder, fencingToken: 3 }, reason: 'blocked', item: patch('W-2') },
    });
    for (const resources of [['claims'], ['claims', 'W-1']]) {
      const view = boardViewOf(token('resource', resources), 'member');
      expect(eventAsSeen(view, revoked('agent:r'))).toEqual({
        type: 'lease.revoked',
        workId: 'W-2',
        data: { lease: { holder: 'agent:r', fencingToken: 3 }, reason: 'blocked' },
      });
      expect(eventAsSeen(view, revoked('agent:x'))).toBeNull(); // another's lease
      expect(eventAsSeen(view, events.other)).toBeNull(); // the item's own events stay its view's
      expect(mayRead(view, 'items', 'W-2')).toBe(false);
    }
    // A view that sees the item sees the whole event.
    const items = boardViewOf(token('resource', ['items']), 'member');
    expect(eventAsSeen(items, revoked('agent:r'))).toEqual(revoked('agent:r'));
  });

  it('lets a token naming work ids hear shouts with no item or about its own, and direct ones to or from it whatever they are about', () => {
    const view = boardViewOf(token('resource', ['W-1']), 'member');
    const cases = [
      [{ from: 'agent:x', to: null, workId: null }, true],
      [{ from: 'agent:x', to: null, workId: 'W-1' }, true],
      [{ from: 'agent:x', to: null, workId: 'W-2' }, false],
      [{ from: 'agent:x', to: 'agent:r', workId: null }, true],
      [{ from: 'agent:r', to: 'agent:y', workId: null }, true],
      [{ from: 'agent:x', to: 'agent:y', workId: null }, false],
      [{ from: 'agent:x', to: 'agent:r', workId: 'W-2' }, true], // to it: the sender chose to tell it
    ] as const;
    // An admin's resource token sees others' direct shouts, but not about items it does not see.
    const admin = boardViewOf(token('resource', ['W-1']), 'admin');
    expect([
      seesShout(admin, { from: 'agent:x', to: 'agent:y', workId: 'W-1' }),
      seesShout(admin, { from: 'agent:x', to: 'agent:y', workId: 'W-2' }),
    ]).toEqual([true, false]);
    for (const [shout, seen] of cases) expect([shout, seesShout(view, shout)]).toEqual([shout, seen]);
  });
});
