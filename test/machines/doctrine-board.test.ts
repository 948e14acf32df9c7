// Doctrine entries and spec clauses as board state, through the pure board decisions: proposals,
// actions, clauses and their versions, the items' links checked inside the decision, the store
// keys they are kept under, and a rewind of the work graph that leaves them untouched.
import { describe, expect, it } from 'vitest';
import { boardFrom, entryCount, storedEntry, withStored, type Board } from '../../machines/board.js';
import { createItems, patchItem } from '../../machines/board-commands.js';
import type { Decide, Decision } from '../../machines/board-decision.js';
import { BoardError } from '../../machines/board-error.js';
import {
  createClause,
  doctrineAction,
  itemsLinking,
  patchClause,
  proposeDoctrine,
  retiredSpecLinks,
} from '../../machines/doctrine-commands.js';
import { graphOf, rewind } from '../../machines/restore-point.js';
import { emptyBoard } from '../../machines/board.js';
import { fields } from '../board/build.js';
import { expectIndexesRebuilt } from './indexes.js';

const T0 = Date.UTC(2026, 10, 25, 12);
const DIGEST = `sha256:${'d'.repeat(64)}`;

class Fleet {
  now = T0;
  constructor(public board: Board = emptyBoard()) {}
  do<R>(decide: Decide<R>): Decision<R> {
    this.now += 1000;
    const decision = decide(this.board, this.now);
    this.board = decision.board;
    return decision;
  }
}

const refused = (f: () => unknown): { code: string; details?: Record<string, unknown> } => {
  try {
    f();
  } catch (e) {
    if (e instanceof BoardError) return { code: e.code, details: e.details };
    throw e;
  }
  throw new Error('accepted');
};

describe('doctrine as board decisions', () => {
  it('proposes under a unique slug, logs each change with the entry’s view and never the expected digest', () => {
    const fleet = new Fleet();
    const proposed = fleet.do(
      proposeDoctrine(
        { slug: 'tests-first', title: 'Tests first', text: 'Write the test first.', expectedDigest: DIGEST },
        'agent:a',
      ),
    );
    expect(proposed.reply).toMatchObject({
      slug: 'tests-first',
      status: 'proposed',
      level: 'advisory',
      agreements: 0,
      expectedDigestSet: true,
      version: 1,
    });
    expect(proposed.events).toEqual([
      {
        type: 'doctrine.proposed',
        actor: 'agent:a',
        workId: null,
        data: { slug: 'tests-first', entry: proposed.reply },
      },
    ]);
    expect([...fleet.board.changed]).toEqual(['doctrine:tests-first']);
    expect(
      refused(() =>
        proposeDoctrine({ slug: 'tests-first', title: 'x', text: 'y', expectedDigest: null }, 'agent:b')(
          fleet.board,
          fleet.now,
        ),
      ),
    ).toMatchObject({ code: 'DOCTRINE_EXISTS' });

    const agreed = fleet.do(doctrineAction('tests-first', 'agent:b', { type: 'AGREE' }));
    expect(agreed.reply.entry).toMatchObject({ agreements: 1, agreedBy: ['agent:b'], version: 2 });
    expect(agreed.events.map((e) => [e.type, e.data.by])).toEqual([['doctrine.agreed', 'agent:b']]);
    const again = fleet.do(doctrineAction('tests-first', 'agent:b', { type: 'AGREE' }));
    expect(again).toMatchObject({ events: [], reply: { already: true, entry: { agreements: 1, version: 2 } } });
    expect(again.board).toBe(agreed.board);

    expect(
      refused(() =>
        doctrineAction('tests-first', 'agent:b', { type: 'BLIND_TEST', answerDigest: DIGEST })(fleet.board, fleet.now),
      ),
    ).toEqual({
      code: 'INVALID_TRANSITION',
      details: { slug: 'tests-first', state: 'proposed', allowed: ['AGREE', 'RATIFY', 'REJECT', 'SET_LEVEL'] },
    });
    fleet.do(doctrineAction('tests-first', 'user:admin', { type: 'RATIFY' }));
    fleet.do(doctrineAction('tests-first', 'user:admin', { type: 'SET_LEVEL', level: 'required' }));
    const passed = fleet.do(doctrineAction('tests-first', 'agent:c', { type: 'BLIND_TEST', answerDigest: DIGEST }));
    const failed = fleet.do(
      doctrineAction('tests-first', 'agent:d', { type: 'BLIND_TEST', answerDigest: `sha256:${'0'.repeat(64)}` }),
    );
    expect([passed.reply.result, failed.reply.result]).toEqual(['pass', 'fail']);
    expect(failed.reply.entry).toMatchObject({
      status: 'ratified',
      level: 'required',
      blindTests: { pass: 1, fail: 1 },
    });
    expect(failed.events).toMatchObject([
      { type: 'doctrine.blind_test', workId: null, data: { slug: 'tests-first', by: 'agent:d', result: 'fail' } },
    ]);
    expect(JSON.stringify([proposed, agreed, passed, failed].map((d) => [d.events, d.reply]))).not.toContain(
      'd'.repeat(64),
    );
    expect(refused(() => doctrineAction('nope', 'agent:b', { type: 'AGREE' })(fleet.board, fleet.now))).toMatchObject({
      code: 'DOCTRINE_NOT_FOUND',
    });
  });

  it('refuses a blind test of an entry with no expected digest', () => {
    const fleet = new Fleet();
    fleet.do(
      proposeDoctrine(
        { slug: 'small-prs', title: 'Small PRs', text: 'Keep them small.', expectedDigest: null },
        'agent:a',
      ),
    );
    fleet.do(doctrineAction('small-prs', 'user:admin', { type: 'RATIFY' }));
    expect(
      refused(() =>
        doctrineAction('small-prs', 'agent:b', { type: 'BLIND_TEST', answerDigest: DIGEST })(fleet.board, fleet.now),
      ),
    ).toMatchObject({ code: 'DOCTRINE_BLIND_TEST_UNSET' });
  });
});

describe('spec clauses as board decisions', () => {
  it('assigns S-<n>, bumps the version on every change and refuses a stale version with nothing changed', () => {
    const fleet = new Fleet();
    const one = fleet.do(createClause({ title: 'Auth', text: 'Every route authenticates.' }, 'user:admin'));
    const two = fleet.do(createClause({ title: 'Limits', text: 'Budgets hold across nodes.' }, 'user:admin'));
    expect([one.reply.clauseId, two.reply.clauseId]).toEqual(['S-1', 'S-2']);
    expect(one.reply).toMatchObject({ status: 'draft', version: 1, linkedBy: [] });
    const accepted = fleet.do(patchClause({ clauseId: 'S-1', version: 1, status: 'accepted' }, 'user:admin'));
    expect(accepted.reply).toMatchObject({ status: 'accepted', version: 2, updatedBy: 'user:admin' });
    expect(accepted.events).toMatchObject([
      { type: 'spec.updated', workId: null, data: { clauseId: 'S-1', fields: ['status'], clause: { version: 2 } } },
    ]);
    const before = fleet.board;
    expect(
      refused(() => patchClause({ clauseId: 'S-1', version: 1, title: 'stale' }, 'user:admin')(fleet.board, fleet.now)),
    ).toEqual({ code: 'VERSION_MISMATCH', details: { clauseId: 'S-1', version: 2 } });
    expect(fleet.board).toBe(before);
    expect(fleet.do(patchClause({ clauseId: 'S-1', version: 2, status: 'accepted' }, 'user:admin'))).toMatchObject({
      events: [],
      reply: { version: 2 },
    });
    expect(
      refused(() => patchClause({ clauseId: 'S-9', version: 1 }, 'user:admin')(fleet.board, fleet.now)),
    ).toMatchObject({ code: 'SPEC_CLAUSE_NOT_FOUND' });
  });

  it('lists the items linking each clause, and those linking a retired one', () => {
    const fleet = new Fleet();
    fleet.do(createClause({ title: 'Auth', text: 'x' }, 'user:admin'));
    fleet.do(
      createItems([fields('a', { spec: ['S-1'] }), fields('b', { spec: ['S-1', 'S-2'] }), fields('c')], 'agent:a'),
    );
    expect(itemsLinking(fleet.board, 'S-1')).toEqual(['W-1', 'W-2']);
    expect(retiredSpecLinks(fleet.board)).toEqual([]);
    fleet.do(patchClause({ clauseId: 'S-1', version: 1, status: 'retired' }, 'user:admin'));
    expect(retiredSpecLinks(fleet.board)).toEqual([
      { workId: 'W-1', clauseId: 'S-1' },
      { workId: 'W-2', clauseId: 'S-1' },
    ]);
    fleet.do(patchItem('W-1', { spec: [] }, undefined, 'agent:a'));
    expect(retiredSpecLinks(fleet.board)).toEqual([{ workId: 'W-2', clauseId: 'S-1' }]);
    expectIndexesRebuilt(fleet.board);
  });
});

describe('item links to doctrine', () => {
  it('are checked against the board’s entries inside the decision, a rejected entry counting as present', () => {
    const fleet = new Fleet();
    expect(
      refused(() =>
        createItems([fields('a'), fields('b', { doctrine: ['tests-first'] })], 'agent:a')(fleet.board, fleet.now),
      ),
    ).toEqual({ code: 'DOCTRINE_LINK_NOT_FOUND', details: { slug: 'tests-first' } });
    fleet.do(proposeDoctrine({ slug: 'tests-first', title: 't', text: 't', expectedDigest: null }, 'agent:a'));
    fleet.do(createItems([fields('a', { doctrine: ['tests-first'] })], 'agent:a'));
    expect(
      refused(() =>
        patchItem('W-1', { doctrine: ['tests-first', 'missing'] }, undefined, 'agent:a')(fleet.board, fleet.now),
      ),
    ).toEqual({ code: 'DOCTRINE_LINK_NOT_FOUND', details: { slug: 'missing' } });
    fleet.do(doctrineAction('tests-first', 'user:admin', { type: 'REJECT' }));
    expect(
      fleet.do(patchItem('W-1', { doctrine: ['tests-first'], title: 'renamed' }, undefined, 'agent:a')).reply.item
        .title,
    ).toBe('renamed');
  });
});

describe('storage and rewind', () => {
  it('keeps entries under their own keys, rebuilds them from the store and from a delta', () => {
    const fleet = new Fleet();
    fleet.do(createItems([fields('a', { spec: ['S-1'] })], 'agent:a'));
    fleet.do(proposeDoctrine({ slug: 'tests-first', title: 't', text: 't', expectedDigest: DIGEST }, 'agent:a'));
    fleet.do(createClause({ title: 'Auth', text: 'x' }, 'user:admin'));
    const board = fleet.board;
    expect(entryCount(board)).toBe(3);
    const stored = ['W-1', 'doctrine:tests-first', 'spec:S-1'].map((key) => storedEntry(board, key)!);
    expect(stored.map((e) => e.workId)).toEqual(['W-1', 'doctrine:tests-first', 'spec:S-1']);
    expect(storedEntry(board, 'doctrine:other')).toBeUndefined();
    const loaded = boardFrom(stored, board.nextWorkSeq, board.nextFencingToken);
    expect([...loaded.items.keys()]).toEqual(['W-1']);
    expect([...loaded.doctrine.keys()]).toEqual(['tests-first']);
    expect([...loaded.spec.keys()]).toEqual(['S-1']);
    expectIndexesRebuilt(loaded);
    const later = fleet.do(doctrineAction('tests-first', 'agent:b', { type: 'AGREE' })).board;
    const caughtUp = withStored(loaded, [storedEntry(later, 'doctrine:tests-first')!], [], later);
    expect(caughtUp.doctrine.get('tests-first')!.life.agreements).toHaveLength(1);
    expect(caughtUp.items.get('W-1')).toBe(loaded.items.get('W-1'));
  });

  it('a rewind swaps the work graph only: doctrine and spec stay as they were', () => {
    const fleet = new Fleet();
    fleet.do(proposeDoctrine({ slug: 'tests-first', title: 't', text: 't', expectedDigest: null }, 'agent:a'));
    fleet.do(createClause({ title: 'Auth', text: 'x' }, 'user:admin'));
    fleet.do(createItems([fields('a', { doctrine: ['tests-first'], spec: ['S-1'] })], 'agent:a'));
    const point = graphOf(fleet.board);
    fleet.do(createItems([fields('b')], 'agent:a'));
    fleet.do(doctrineAction('tests-first', 'user:admin', { type: 'RATIFY' }));
    fleet.do(patchClause({ clauseId: 'S-1', version: 1, status: 'retired' }, 'user:admin'));
    const [doctrine, spec] = [fleet.board.doctrine.get('tests-first'), fleet.board.spec.get('S-1')];
    const rewound = fleet.do(rewind(point, { actor: 'user:o', restorePointId: 'rp_1' }));
    expect([...rewound.board.items.keys()]).toEqual(['W-1']);
    expect(rewound.board.doctrine.get('tests-first')).toBe(doctrine);
    expect(rewound.board.spec.get('S-1')).toBe(spec);
    expect([...rewound.board.changed]).toEqual(['W-2']);
    expect(rewound.events.map((e) => e.type)).toEqual(['board.rewound']);
    expect(retiredSpecLinks(rewound.board)).toEqual([{ workId: 'W-1', clauseId: 'S-1' }]);
  });
});
