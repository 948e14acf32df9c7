// The hub's event stream on a simulated bus, over a real embedded store's log: a subscription goes
// on the board's stream once its replay is done (its events then come by publish, one per topic,
// not by a send per socket), a lost bus message takes it back to the per-socket path, which fills
// the hole from the log, and it joins the stream again once it has caught up. The sockets and the
// engine's topics are simulated here (the e2e suites run them for real); what is checked is that
// each socket gets every event once, in seq order, whichever path carried it. A lease's end also
// comes to its holder as a notice: a socket that unsubscribed after its batch does not get it twice.
import { describe, expect, it } from 'vitest';
import type { CommittedEvent } from '../../actors/board-actor.js';
import type { Identity } from '../../src/auth/identity.js';
import type { BoardRecord, EventRecord, Store, TokenRecord } from '../../store/ports/store.js';
import { workspaceToken } from '../support/identities.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { until } from '../support/until.js';
import { hubRig } from './hub-rig.js';

const used = useStore();

/** An item's update at `seq` on the board, as committed; `logged`, as the board's log holds it. */
const itemUpdate = (boardId: string, seq: number): CommittedEvent => ({
  boardId,
  seq,
  type: 'item.updated',
  actor: 'agent:a',
  workId: 'W-1',
  at: 1_000 + seq,
  data: {},
});
const logged = (e: CommittedEvent): EventRecord => ({ _id: `${e.boardId}:${e.seq}`, version: 1, ...e }) as EventRecord;

/** The rig's hub on the store's log (or `store`'s); `hear` is the bus's. */
const rig = (hear?: (boardId: string) => Promise<void>, store: Store = used.store) => hubRig(store, { hear });

describe('the board stream', () => {
  it('carries a caught-up subscription by publish, hands it back to the log on a lost bus message, and takes it again once it has caught up: every event once, in order', async () => {
    const boardId = unique('board');
    const event = (seq: number, type = 'item.updated'): CommittedEvent => ({
      boardId,
      seq,
      type,
      actor: 'agent:a',
      workId: 'W-1',
      at: 1_000 + seq,
      data: {},
    });
    const log = async (...seqs: number[]) => {
      await used.store.events.insertMissing(
        seqs.map(
          (seq) =>
            ({
              _id: `${boardId}:${seq}`,
              version: 1,
              ...event(seq, seq % 3 === 0 ? 'lease.granted' : 'item.updated'),
            }) as EventRecord,
        ),
      );
    };
    // Only the board's lastSeq is read (a subscription's start): the one when it subscribes.
    await used.store.boards.insert({ _id: boardId, version: 1, lastSeq: 3 } as unknown as BoardRecord);
    await log(1, 2, 3);
    const { hub, open, publishes } = rig();
    const all = open();
    const items = open();
    await hub.message(all, JSON.stringify({ type: 'subscribe', boardId, topics: ['activity'], since: 0 }));
    await hub.message(items, JSON.stringify({ type: 'subscribe', boardId, topics: ['items'], since: 0 }));
    // Replayed from the log, one send each; then both are on the stream.
    expect(all.events().map((g) => [g.seq, g.via])).toEqual([
      [1, 'send'],
      [2, 'send'],
      [3, 'send'],
    ]);
    expect(all.topics).toEqual(new Set([`events/${boardId}/activity`, `shouts/${boardId}`]));
    expect(items.topics).toEqual(new Set([`events/${boardId}/items`]));

    // Live: published once per event and topic, whatever the number of sockets.
    await log(4, 5);
    hub.deliver(boardId, [event(4), event(5)]);
    expect(publishes()).toBe(4);
    expect(
      all
        .events()
        .slice(3)
        .map((g) => [g.seq, g.via]),
    ).toEqual([
      [4, 'publish'],
      [5, 'publish'],
    ]);

    // Event 6 never came over the bus (7 did): both leave the stream and read 6 and 7 from the log.
    await log(6, 7);
    hub.deliver(boardId, [event(7)]);
    await until(() => all.events().length === 7 && items.events().length === 5);
    expect(
      all
        .events()
        .slice(5)
        .map((g) => [g.seq, g.via]),
    ).toEqual([
      [6, 'send'],
      [7, 'send'],
    ]);

    // Caught up, they take the stream again; a late duplicate of 5 changes nothing.
    await log(8);
    hub.deliver(boardId, [event(5), event(8)]);
    await until(() => all.events().length === 8);
    expect(all.events().map((g) => g.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(all.events().at(-1)!.via).toBe('publish');
    // The items watcher got the item events only (3 and 6 are lease events), each once.
    expect(items.events().map((g) => g.seq)).toEqual([1, 2, 4, 5, 7, 8]);

    // Merging activity in moves the items watcher to the whole stream: the next lease event reaches it once.
    await hub.message(items, JSON.stringify({ type: 'subscribe', boardId, topics: ['activity'] }));
    expect(items.topics).toEqual(new Set([`events/${boardId}/activity`, `shouts/${boardId}`]));
    await log(9);
    hub.deliver(boardId, [event(9, 'lease.granted')]);
    expect(items.events().map((g) => g.seq)).toEqual([1, 2, 4, 5, 7, 8, 9]);
    expect(all.events().map((g) => g.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe('a lease holder’s end', () => {
  /** A board, a holder's socket on it, and its lease ends (on `workId`, W-<seq> unless named) as committed. */
  async function holderOn(
    identity?: Identity,
    { lastSeq = 0, hear }: { lastSeq?: number; hear?: () => Promise<void> } = {},
  ) {
    const boardId = (identity?.kind === 'token' && identity.boardId) || unique('board');
    await used.store.boards.insert({ _id: boardId, version: 1, lastSeq } as unknown as BoardRecord);
    const { hub, open } = rig(hear);
    const holder = open(identity);
    const ended = (seq: number, workId = `W-${seq}`): CommittedEvent => ({
      boardId,
      seq,
      type: 'lease.expired',
      actor: 'system:lease-scheduler',
      workId,
      at: 1_000 + seq,
      data: { lease: { holder: holder.identity.principal } },
    });
    const committed = (e: CommittedEvent) =>
      used.store.events.insertMissing([{ _id: `${boardId}:${e.seq}`, version: 1, ...e } as EventRecord]);
    const subscribe = async (topics: string[], since?: number) => {
      const before = holder.got.length;
      await hub.message(holder, JSON.stringify({ type: 'subscribe', boardId, topics, since }));
      await until(() => holder.got.slice(before).some((g) => g.type === 'subscribed'));
    };
    const unsubscribe = () => hub.message(holder, JSON.stringify({ type: 'unsubscribe', boardId }));
    const notice = (e: CommittedEvent) => hub.hears['lease.ended']({ kind: 'lease.ended', boardId, events: [e] });
    const seqs = () => holder.events().map((g) => g.seq);
    return { hub, holder, boardId, ended, committed, subscribe, unsubscribe, notice, seqs };
  }

  it('comes by the notice when the subscription under way starts after it, once', async () => {
    let entered!: () => void;
    let open!: () => void;
    const hearing = new Promise<void>((r) => (entered = r));
    const gate = new Promise<void>((r) => (open = r));
    const hear = () => (entered(), gate);
    // The board's head is 1 when the subscription starts: it starts after the end (no since).
    const { hub, holder, boardId, ended, committed, seqs } = await holderOn(undefined, { lastSeq: 1, hear });
    await committed(ended(1));
    const subscribing = hub.message(holder, JSON.stringify({ type: 'subscribe', boardId, topics: ['leases'] }));
    await hearing; // the subscription is made, its start not yet known
    hub.deliver(boardId, [ended(1)]); // held for the subscription
    hub.hears['lease.ended']({ kind: 'lease.ended', boardId, events: [ended(1)] });
    expect(seqs()).toEqual([]);
    open();
    await subscribing;
    await until(() => holder.got.some((g) => g.type === 'subscribed'));
    expect(seqs()).toEqual([1]);
  });

  it('comes by the notice when the subscription that would send it ends before it did', async () => {
    const { hub, holder, boardId, ended, committed, unsubscribe, notice, seqs } = await holderOn(undefined, {
      lastSeq: 2,
    });
    await used.store.events.insertMissing([
      {
        _id: `${boardId}:1`,
        version: 1,
        boardId,
        seq: 1,
        type: 'item.updated',
        actor: 'agent:a',
        workId: 'W-9',
        at: 1_001,
        data: {},
      } as unknown as EventRecord,
    ]);
    await committed(ended(2));
    let drain!: () => void;
    holder.stalled = new Promise((r) => (drain = r)); // the replay waits for the client to read
    const subscribing = hub.message(
      holder,
      JSON.stringify({ type: 'subscribe', boardId, topics: ['leases'], since: 0 }),
    );
    await until(() => holder.got.some((g) => g.type === 'subscribed'));
    notice(ended(2)); // the replay will send it: left to it
    expect(seqs()).toEqual([]);
    await unsubscribe(); // before it did
    expect(seqs()).toEqual([2]);
    holder.stalled = null;
    drain();
    await subscribing; // the replay stops: the subscription is gone
    expect(seqs()).toEqual([2]);
  });

  it('comes once to a socket that unsubscribes between the batch that carried it and its notice, and a later end comes by the notice', async () => {
    const { hub, boardId, ended, committed, subscribe, unsubscribe, notice, seqs } = await holderOn();
    await subscribe(['leases'], 0);
    await committed(ended(1));
    // The batch reaches the subscription; the socket unsubscribes before the notice of the same commit.
    hub.deliver(boardId, [ended(1)]);
    expect(seqs()).toEqual([1]);
    await unsubscribe();
    notice(ended(1));
    expect(seqs()).toEqual([1]);
    // Unsubscribed, the holder hears its next lease's end as the notice brings it (once what it may see is read).
    notice(ended(2));
    await until(() => seqs().length === 2);
    expect(seqs()).toEqual([1, 2]);
  });

  it('comes by the notice when its subscription let it by for its topics, though leases were merged in after, subscribed or not', async () => {
    const { hub, boardId, ended, committed, subscribe, unsubscribe, notice, seqs } = await holderOn();
    await subscribe(['items'], 0);
    await committed(ended(1));
    hub.deliver(boardId, [ended(1)]); // not a topic it watches
    await subscribe(['leases']); // merged: from here on it carries lease ends
    notice(ended(1));
    expect(seqs()).toEqual([1]);
    await committed(ended(2));
    hub.deliver(boardId, [ended(2)]);
    notice(ended(2));
    expect(seqs()).toEqual([1, 2]); // carried by the subscription, once
    // Again, unsubscribing between the batch and the notice.
    await unsubscribe();
    await subscribe(['items'], 2);
    await committed(ended(3));
    hub.deliver(boardId, [ended(3)]);
    await subscribe(['leases']);
    await unsubscribe();
    notice(ended(3));
    await until(() => seqs().length === 3);
    expect(seqs()).toEqual([1, 2, 3]);
  });

  it('comes once to a resource token’s socket whose view does not hold the item, without the item’s patch, subscribed or not', async () => {
    const boardId = unique('board');
    const identity = workspaceToken({
      principal: `agent:${unique('a')}`,
      tokenId: unique('tok'),
      scope: 'resource',
      boardId,
      resources: ['W-1'],
    });
    await used.store.tokens.insert({
      _id: identity.tokenId,
      version: 1,
      accountId: identity.accountId,
      agentId: identity.agentId,
      secretHash: unique('hash'),
      prefix: identity.prefix,
      name: 'narrow',
      scope: 'resource',
      boardId,
      role: 'member',
      resources: ['W-1'],
      expiresAt: null,
      lastUsedAt: null,
      revoked: false,
      createdAt: 0,
    } as unknown as TokenRecord);
    const { hub, holder, ended, committed, subscribe, unsubscribe, notice, seqs } = await holderOn(identity);
    // Its principal holds a lease on W-2 (by another of its tokens): it hears its lease, not the item.
    const patched = (seq: number): CommittedEvent => {
      const e = ended(seq, 'W-2');
      return { ...e, data: { ...e.data, item: { workId: 'W-2', version: seq + 1, state: 'ready' } } };
    };
    const lease = { lease: { holder: holder.identity.principal } };
    await subscribe(['leases'], 0);
    await committed(patched(1));
    hub.deliver(boardId, [patched(1)]); // carried by the subscription, cut to its view
    expect(seqs()).toEqual([1]);
    notice(patched(1));
    expect(seqs()).toEqual([1]);
    await committed(patched(2));
    hub.deliver(boardId, [patched(2)]);
    await unsubscribe();
    notice(patched(2));
    expect(seqs()).toEqual([1, 2]);
    notice(patched(3)); // unsubscribed: by the notice, cut alike
    await until(() => seqs().length === 3);
    expect(seqs()).toEqual([1, 2, 3]);
    expect(holder.events().map((g) => g.event.data)).toEqual([lease, lease, lease]);
  });
});

describe('a catch-up of one board', () => {
  it('reads that board’s log to its subscriptions and leaves the other boards’ as they are', async () => {
    const [late, other] = [unique('board'), unique('board')];
    for (const boardId of [late, other]) {
      await used.store.boards.insert({ _id: boardId, version: 1, lastSeq: 1 } as unknown as BoardRecord);
      await used.store.events.insertMissing([logged(itemUpdate(boardId, 1))]);
    }
    const { hub, open } = rig();
    const [onLate, onOther] = [open(), open()];
    await hub.message(onLate, JSON.stringify({ type: 'subscribe', boardId: late, topics: ['items'], since: 0 }));
    await hub.message(onOther, JSON.stringify({ type: 'subscribe', boardId: other, topics: ['items'], since: 0 }));
    await until(() => onLate.events().length === 1 && onOther.events().length === 1);
    // Each board commits 2 and the bus brings neither (as while a channel was not yet confirmed).
    for (const boardId of [late, other]) await used.store.events.insertMissing([logged(itemUpdate(boardId, 2))]);
    hub.hears['catch-up']({ kind: 'catch-up', boardId: late });
    await until(() => onLate.events().length === 2, { what: 'the late board read up to its log' });
    expect(onLate.events().map((g) => g.seq)).toEqual([1, 2]);
    await new Promise((r) => setTimeout(r, 200)); // time for a read of the other board, were there one
    expect(onOther.events().map((g) => g.seq)).toEqual([1]);
    // The whole node's catch-up (the bus was away) reads every board.
    hub.hears['catch-up']({ kind: 'catch-up' });
    await until(() => onOther.events().length === 2, { what: 'every board read up to its log' });
    expect(onLate.events().map((g) => g.seq)).toEqual([1, 2]);
  });
});

/** The store with its log reads held while `hold` is on: a read under way returns what it found once released. */
function heldReads(store: Store) {
  let gate: Promise<void> | null = null;
  let release = () => undefined as void;
  let reads = 0;
  const events = new Proxy(store.events, {
    get(target, prop, receiver) {
      if (prop !== 'find') return Reflect.get(target, prop, receiver);
      return async (...args: Parameters<Store['events']['find']>) => {
        reads++;
        const found = await target.find(...args);
        if (gate) await gate;
        return found;
      };
    },
  });
  return {
    store: { ...store, events } as Store,
    reads: () => reads,
    hold: () => void (gate = new Promise<void>((r) => (release = r))),
    release: () => {
      gate = null;
      release();
    },
  };
}

describe('a catch-up', () => {
  it.each([
    ['of that board', { kind: 'catch-up', boardId: '' }],
    ['of the whole node', { kind: 'catch-up' }],
  ] as const)(
    'has a subscription still sending its replay read the log again, for a commit past its last page (%s)',
    async (_, notice) => {
      const boardId = unique('board');
      const item = (seq: number) => logged(itemUpdate(boardId, seq));
      await used.store.boards.insert({ _id: boardId, version: 1, lastSeq: 1 } as unknown as BoardRecord);
      await used.store.events.insertMissing([item(1)]);
      const { hub, open } = rig();
      const watcher = open();
      let drain!: () => void;
      watcher.stalled = new Promise((r) => (drain = r)); // its replay has read the log and waits to send 1
      const subscribing = hub.message(
        watcher,
        JSON.stringify({ type: 'subscribe', boardId, topics: ['items'], since: 0 }),
      );
      await until(() => watcher.waitedOn > 0, { what: 'the replay waiting to send 1' });
      // 2 is committed and the bus loses it; the catch-up finds the subscription still replaying.
      await used.store.events.insertMissing([item(2)]);
      hub.hears['catch-up']('boardId' in notice ? { ...notice, boardId } : notice);
      await new Promise((r) => setTimeout(r, 100));
      watcher.stalled = null;
      drain();
      await subscribing;
      await until(() => watcher.events().length === 2, {
        what: 'the commit the bus lost, with no later one to reveal it',
      });
      expect(watcher.events().map((g) => g.seq)).toEqual([1, 2]);
    },
  );

  it('leaves nothing to go out after its subscription ended while it read the log', async () => {
    const boardId = unique('board');
    const item = (seq: number) => itemUpdate(boardId, seq);
    await used.store.boards.insert({ _id: boardId, version: 1, lastSeq: 1 } as unknown as BoardRecord);
    await used.store.events.insertMissing([logged(item(1))]);
    const reads = heldReads(used.store);
    const { hub, open } = rig(undefined, reads.store);
    const watcher = open();
    reads.hold();
    const subscribing = hub.message(
      watcher,
      JSON.stringify({ type: 'subscribe', boardId, topics: ['items'], since: 1 }),
    );
    await until(() => reads.reads() > 0, { what: 'the replay reading the log' });
    hub.deliver(boardId, [item(2)]); // held while the log is read
    await hub.message(watcher, JSON.stringify({ type: 'unsubscribe', boardId }));
    reads.release();
    await subscribing;
    await new Promise((r) => setTimeout(r, 50));
    expect(watcher.got.map((g) => g.type)).toEqual(['subscribed', 'unsubscribed']);
  });
});
