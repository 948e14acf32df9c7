// A commit whose answer was lost (the store failed after carrying it out) is told to the board's
// listeners once a read finds it landed, on the MongoDB wire server as on the embedded store.
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { BoardActor } from '../../actors/board-actor.js';
import { createItems } from '../../machines/board-commands.js';
import { claim } from '../../machines/lease-commands.js';
import { newBoardRecord, StoreUnavailableError, type Store } from '../../store/ports/store.js';
import { mongoStore, type OpenedStore } from '../support/stores.js';
import { loseAnswerOnce } from '../support/fail-once.js';
import { until } from '../support/until.js';
import { fields } from '../board/build.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('board actor on the MongoDB wire server', () => {
  let opened: OpenedStore;
  let store: Store;
  beforeEach(async () => {
    opened = await mongoStore(uri!)();
    store = opened.store;
    await store.boards.insert(newBoardRecord('b'));
  });
  afterEach(async () => {
    await store.close();
    await opened.drop();
  });

  it('tells its listeners of a commit whose answer was lost once a read finds it landed', async () => {
    const actor = new BoardActor('b', store, Date.now);
    const told: string[] = [];
    actor.subscribe((events) => told.push(...events.map((e) => `${e.seq} ${e.type}`)));
    await actor.ask(createItems([fields('one')], 'user:a'));
    await until(() => told.length > 0, { what: 'the item’s events told' });
    const before = told.length;
    loseAnswerOnce(store.boards, 'commit');
    await expect(
      actor.ask(claim({ principal: 'agent:1', workId: null, purpose: 'work', ttlMs: 60_000, leaseId: 'L1' })),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    await until(() => told.length > before, { what: 'the landed claim’s events told' });
    expect(told.slice(before).some((t) => t.endsWith(' lease.granted'))).toBe(true);
  });
});
