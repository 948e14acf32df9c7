// What a socket sends while its subscribe is still being let in (the credential's access read is
// held open here, as a slow store would hold it): an unsubscribe cancels it, a repeated subscribe
// to the board waits for it and merges, and subscribes under way count towards the socket's boards.
import { describe, expect, it } from 'vitest';
import type { CommittedEvent } from '../../actors/board-actor.js';
import { SOCKET_BUDGET } from '../../src/ws/protocol.js';
import { shoutsTopic } from '../../src/ws/topics.js';
import type { BoardRecord } from '../../store/ports/store.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { until } from '../support/until.js';
import { hubRig, type FakeSocket } from './hub-rig.js';

const used = useStore();

async function newBoard(): Promise<string> {
  const boardId = unique('board');
  await used.store.boards.insert({ _id: boardId, version: 1, lastSeq: 0 } as unknown as BoardRecord);
  return boardId;
}

const created = (boardId: string, seq: number): CommittedEvent => ({
  boardId,
  seq,
  type: 'item.created',
  actor: 'agent:a',
  workId: `W-${seq}`,
  at: 1_000 + seq,
  data: {},
});

const types = (socket: FakeSocket) => socket.got.map((m) => m.type);

describe('a subscribe still being let in', () => {
  it('is cancelled by an unsubscribe: nothing follows `unsubscribed`', async () => {
    const boardId = await newBoard();
    const { hub, open, reach } = hubRig(used.store);
    const socket = open();
    reach.hold();
    const subscribing = hub.message(socket, JSON.stringify({ type: 'subscribe', boardId, topics: ['activity'] }));
    await until(() => reach.waiting === 1);
    await hub.message(socket, JSON.stringify({ type: 'unsubscribe', boardId }));
    reach.release();
    await subscribing;
    hub.deliver(boardId, [created(boardId, 1)]);
    expect(types(socket)).toEqual(['unsubscribed']);
    expect(hub.subscribedTo(boardId)).toBe(false);
  });

  it('is cancelled with the repeated subscribes sent before the unsubscribe, not those sent after it', async () => {
    const boardId = await newBoard();
    const { hub, open, reach } = hubRig(used.store);
    const socket = open();
    reach.hold();
    const subscribe = (topics: string[]) => hub.message(socket, JSON.stringify({ type: 'subscribe', boardId, topics }));
    const before = [subscribe(['items']), subscribe(['leases'])];
    await until(() => reach.waiting === 1);
    await hub.message(socket, JSON.stringify({ type: 'unsubscribe', boardId }));
    const after = subscribe(['shouts']);
    await until(() => reach.waiting === 2);
    reach.release();
    await Promise.all([...before, after]);
    expect(types(socket)).toEqual(['unsubscribed', 'subscribed']);
    expect(socket.sent('subscribed')[0]).toMatchObject({ boardId, topics: ['shouts'] });
  });

  it('is waited for by a repeated subscribe to the board, which is answered after it and merges its topics', async () => {
    const boardId = await newBoard();
    const { hub, open, reach } = hubRig(used.store);
    const socket = open();
    reach.hold();
    const first = hub.message(socket, JSON.stringify({ type: 'subscribe', boardId, topics: ['items'] }));
    await until(() => reach.waiting === 1);
    const second = hub.message(socket, JSON.stringify({ type: 'subscribe', boardId, topics: ['shouts'] }));
    reach.release();
    await Promise.all([first, second]);
    const answers = socket.sent('subscribed');
    expect(answers).toHaveLength(2);
    // In order: the subscription is told before the merge into it.
    expect(answers[0]).not.toHaveProperty('merged');
    expect(answers[1]).toMatchObject({ boardId, topics: ['items', 'shouts'], merged: true });
    expect(socket.topics.has(shoutsTopic(boardId))).toBe(true); // it hears the board's shouts
  });

  it('counts towards the boards one socket may watch, however fast they come', async () => {
    const boards = await Promise.all(Array.from({ length: SOCKET_BUDGET.subscriptions + 10 }, newBoard));
    const { hub, open, reach } = hubRig(used.store);
    const socket = open();
    reach.hold();
    const subscribing = boards.map((boardId) =>
      hub.message(socket, JSON.stringify({ type: 'subscribe', boardId, topics: ['items'] })),
    );
    await until(() => reach.waiting + socket.sent('error').length === boards.length); // each held or refused
    reach.release();
    await Promise.all(subscribing);
    expect(socket.sent('subscribed')).toHaveLength(SOCKET_BUDGET.subscriptions);
    expect(socket.sent('error').map((m) => m.error.code)).toEqual(Array(10).fill('SUBSCRIPTION_LIMIT'));
  });
});
