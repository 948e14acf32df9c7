import { newBoardRecord } from '../../store/ports/store.js';
// A decision that writes nothing (a repeated claim, a refusal) meets no version check of its own:
// the actor answers it from the board it holds only while its currency token stands (the node the
// board's home, its bus connected, since the board was last checked), else from the store's board.
// Two actors on one store stand for two nodes; the second commits behind the first's back.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BoardActor } from '../../actors/board-actor.js';
import { createItems } from '../../machines/board-commands.js';
import { claim, leaseAction } from '../../machines/lease-commands.js';
import type { NewItem } from '../../machines/board-commands.js';
import type { Store } from '../../store/ports/store.js';
import { embeddedStore, type OpenedStore } from '../support/stores.js';
import { until } from '../support/until.js';

const item = (title: string): NewItem => ({
  title,
  description: '',
  type: 'task',
  priority: 2,
  parentId: null,
  dependsOn: [],
  verify: 'none',
  maxAttempts: 3,
  criteria: [],
  doctrine: [],
  spec: [],
  labels: [],
});
const claimAs = (who: string, workId: string, leaseId: string) =>
  claim({ principal: `agent:${who}`, workId, purpose: 'work', ttlMs: 60_000, leaseId });
const release = (who: string, leaseId: string) =>
  leaseAction({ principal: `agent:${who}`, leaseId, action: 'release', ttlMs: null });

describe('answers that write nothing', () => {
  let opened: OpenedStore;
  let store: Store;
  let versionReads = 0;
  beforeEach(async () => {
    opened = await embeddedStore();
    store = opened.store;
    await store.boards.insert(newBoardRecord('b'));
    const versionOf = store.boards.versionOf.bind(store.boards);
    versionReads = 0;
    store.boards.versionOf = (id) => (versionReads++, versionOf(id));
  });
  afterEach(async () => {
    await store.close();
    await opened.drop();
  });

  /** `here` holds W-1 claimed by w13 and W-2 by x; then `elsewhere` has w13 release, w7 claim W-1 and x release W-2, unheard by `here`. */
  async function behindTheBack(token: () => string | null): Promise<BoardActor> {
    const here = new BoardActor('b', store, Date.now, undefined, undefined, token);
    await here.ask(createItems([item('one'), item('two')], 'user:a'));
    expect((await here.ask(claimAs('w13', 'W-1', 'L13'))).fencingToken).toBe(1);
    await here.ask(claimAs('x', 'W-2', 'Lx'));
    const elsewhere = new BoardActor('b', store, Date.now);
    await elsewhere.ask(release('w13', 'L13'));
    expect((await elsewhere.ask(claimAs('w7', 'W-1', 'L7'))).fencingToken).toBe(3);
    await elsewhere.ask(release('x', 'Lx'));
    return here;
  }

  it('reads the store’s version first while the token is unknown, and decides on the board as stored: no stale grant, no stale refusal', async () => {
    const here = await behindTheBack(() => null);
    const reads = versionReads;
    await expect(here.ask(claimAs('w13', 'W-1', 'L13b'))).rejects.toMatchObject({
      code: 'ITEM_NOT_READY',
      details: { workId: 'W-1', holder: 'agent:w7' },
    });
    expect((await here.ask(claimAs('w7', 'W-1', 'L7b'))).leaseId).toBe('L7'); // a repeated claim: the holder's own lease, as stored
    expect((await here.ask(claimAs('y', 'W-2', 'Ly'))).fencingToken).toBe(4); // free as stored: granted, not refused
    expect(versionReads - reads).toBeGreaterThanOrEqual(2);
  });

  it('reads it again once the token changes (a new home tenure, a bus interruption)', async () => {
    let token = 'tenure-1';
    const here = await behindTheBack(() => token);
    token = 'tenure-2';
    await expect(here.ask(claimAs('w13', 'W-1', 'L13b'))).rejects.toMatchObject({
      code: 'ITEM_NOT_READY',
      details: { holder: 'agent:w7' },
    });
  });

  it('answers from the board it holds, with no read, while the token it was checked under stands', async () => {
    // Only a home decides, so while its token stands nothing changes its board unseen; here a second
    // actor breaks that on purpose, and the held board is what answers.
    const here = await behindTheBack(() => 'tenure-1');
    const reads = versionReads;
    expect((await here.ask(claimAs('w13', 'W-1', 'L13b'))).leaseId).toBe('L13');
    expect(versionReads).toBe(reads);
  });

  it('answers a read from the board it holds, with no read of the store, while that token stands; reads again once it changes', async () => {
    let token = 'tenure-1';
    const here = await behindTheBack(() => token);
    const reads = versionReads;
    const held = await here.read();
    expect(held.board.items.get('W-1')?.life.lease?.holder).toBe('agent:w13'); // held, not re-read: nothing asked the store
    expect(versionReads).toBe(reads);
    token = 'tenure-2';
    const stored = await here.read();
    expect(versionReads).toBe(reads + 1);
    expect(stored.board.items.get('W-1')?.life.lease?.holder).toBe('agent:w7'); // the store's, read under the new token
    expect((await here.read()).record.version).toBe(stored.record.version);
    expect(versionReads).toBe(reads + 1); // vouched again under tenure-2
  });

  it('reads again, under a standing token, a board it heard another node commit to while it first loaded it', async () => {
    await new BoardActor('b', store, Date.now).ask(createItems([item('one')], 'user:a'));
    const here = new BoardActor('b', store, Date.now, undefined, undefined, () => 'tenure-1');
    const elsewhere = new BoardActor('b', store, Date.now);
    const load = store.boards.load.bind(store.boards);
    let first = true;
    store.boards.load = async (id) => {
      const stored = await load(id);
      if (first) {
        // Read; then another node commits and its batch is heard here before the load is done.
        first = false;
        await elsewhere.ask(claimAs('w7', 'W-1', 'L7'));
        here.saw((await elsewhere.read()).record.lastSeq);
      }
      return stored;
    };
    expect((await here.read()).board.items.get('W-1')?.life.lease).toBeFalsy(); // as read, before the claim
    expect((await here.read()).board.items.get('W-1')?.life.lease?.holder).toBe('agent:w7');
  });

  it('asks the store’s version for a read while its own commit is on its way, even under a standing token', async () => {
    const here = new BoardActor('b', store, Date.now, undefined, undefined, () => 'tenure-1');
    await here.ask(createItems([item('one')], 'user:a'));
    await here.read();
    const reads = versionReads;
    const through = store.boards.commit.bind(store.boards);
    let land!: () => void;
    const landing = new Promise<void>((r) => (land = r));
    store.boards.commit = async (...args) => {
      await landing;
      return through(...args);
    };
    const claiming = here.ask(claimAs('w1', 'W-1', 'L1'));
    await until(() => versionReads > reads || here.waiting === 0);
    const reading = Promise.resolve(here.read());
    expect(versionReads).toBe(reads + 1);
    land();
    await claiming;
    await reading;
  });
});
