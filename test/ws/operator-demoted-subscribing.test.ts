// An operator demoted while their subscribe as operator is being let in (its audit row being
// written) is asked again once it watches: accountsChanged (the account's `records.changed`) saw no
// subscription yet and passed it by, so it once watched the foreign board as operator until the
// minute's revalidation. The firehose subscribe has the same shape (its audit row written first).
import { describe, expect, it } from 'vitest';
import type { Committed } from '../../actors/board-actor.js';
import { emptyBoard } from '../../machines/board.js';
import type { Identity } from '../../src/auth/identity.js';
import type { ProjectSelector } from '../../src/auth/project-selection.js';
import { BoardFeed } from '../../src/board/feed/feed.js';
import type { ResolutionObserver } from '../../src/errors/observed-resolution.js';
import { Hub } from '../../src/ws/hub.js';
import { OperatorAccess } from '../../src/ws/operator-access.js';
import type { BoardRecord, Store } from '../../store/ports/store.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { until } from '../support/until.js';
import { FakeSocket, Gate } from './hub-rig.js';

const used = useStore();

/** A hub whose operator's audit rows wait at `auditing`, with `demote` taking the standing away as an account write does. */
async function rig() {
  const boardId = unique('board');
  await used.store.boards.insert({ _id: boardId, version: 1, lastSeq: 0 } as unknown as BoardRecord);
  let operator = true;
  const auditing = new Gate();
  const operators = new OperatorAccess({
    store: {
      projects: { get: async (id: string) => ({ _id: id, name: 'foreign' }) },
      accounts: used.store.accounts,
    } as unknown as Pick<Store, 'projects' | 'accounts'>,
    audit: () => auditing.pass(),
    isOperator: async () => operator,
    originOf: () => undefined,
    clock: () => Date.now(),
  });
  const hub = new Hub({
    // Not a member of the board: only an operator reaches it.
    selector: { reachable: async () => null, closedTo: async () => false } as unknown as ProjectSelector,
    store: used.store,
    feed: new BoardFeed({
      store: used.store,
      readBoard: async () => ({ board: emptyBoard() }) as Committed,
      syncLog: async () => undefined,
      clock: () => Date.now(),
    }),
    stillValid: async () => true,
    observer: { resolution: () => null } as unknown as ResolutionObserver,
    publicUrl: 'http://board.test',
    clock: () => Date.now(),
    hear: async () => undefined,
    hearAll: async () => undefined,
    publish: () => undefined,
    operators,
  });
  const identity: Identity = { kind: 'session', principal: 'user:op', accountId: 'op', sessionId: unique('s') };
  const socket = new FakeSocket(identity);
  hub.open(socket);
  /** Sends `message` and, while its audit row is being written, demotes the operator (the account's write heard). */
  const demotedDuring = async (message: object) => {
    auditing.hold();
    const subscribing = hub.message(socket, JSON.stringify(message));
    await until(() => auditing.waiting === 1);
    operator = false;
    hub.hears['records.changed']({ kind: 'records.changed', collection: 'accounts', ids: ['op'] });
    await new Promise((r) => setTimeout(r, 20));
    auditing.release();
    await subscribing;
    await new Promise((r) => setTimeout(r, 50));
  };
  return { boardId, socket, demotedDuring };
}

describe('an operator demoted while their subscribe to a foreign board is let in', () => {
  it('does not go on watching that board as operator', async () => {
    const { boardId, socket, demotedDuring } = await rig();
    await demotedDuring({ type: 'subscribe', boardId, topics: ['activity'] });
    expect(
      socket.got.map((m) => m.type),
      'the demoted operator was let in to watch the board as operator',
    ).not.toContain('subscribed');
  });
});

describe('an operator demoted while their firehose subscribe is let in', () => {
  it('is not put on the firehose', async () => {
    const { socket, demotedDuring } = await rig();
    await demotedDuring({ type: 'subscribe', topics: ['firehose'] });
    expect(
      socket.got.map((m) => m.type),
      'the demoted operator was put on the firehose',
    ).not.toContain('subscribed');
    expect(socket.got.at(-1)).toMatchObject({ type: 'unsubscribed', topics: ['firehose'] });
  });
});
