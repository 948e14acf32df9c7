// A client that stops reading while its subscription replays the log: the board's live events are
// held for it meanwhile, and once more than a backlog's worth is held the socket is closed as a
// slow consumer (4008), as it would be had they been sent; not held for without end.
import { expect, it } from 'vitest';
import type { CommittedEvent } from '../../actors/board-actor.js';
import { eventFrame } from '../../src/ws/frames.js';
import { CLOSE, SLOW_CONSUMER } from '../../src/ws/protocol.js';
import type { BoardRecord, EventRecord } from '../../store/ports/store.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { until } from '../support/until.js';
import { hubRig } from './hub-rig.js';

const used = useStore();

const update = (boardId: string, seq: number): CommittedEvent => ({
  boardId,
  seq,
  type: 'item.updated',
  actor: 'agent:a',
  workId: 'W-1',
  at: 1_000 + seq,
  data: { item: { workId: 'W-1', version: seq, state: 'ready', title: 'x'.repeat(200) } },
});

/** A board whose log holds ten events, and a socket on a hub of its own (hub-rig.ts). */
async function boardWithTenLogged() {
  const boardId = unique('board');
  await used.store.boards.insert({ _id: boardId, version: 1, lastSeq: 10 } as unknown as BoardRecord);
  const logged = Array.from({ length: 10 }, (_, i) => update(boardId, i + 1));
  await used.store.events.insertMissing(
    logged.map((e) => ({ _id: `${boardId}:${e.seq}`, version: 1, ...e }) as EventRecord),
  );
  const { hub, open } = hubRig(used.store);
  return { boardId, hub, socket: open() };
}

it('closes a socket that stopped reading during its replay once the live events held for it pass the cap', async () => {
  const { boardId, hub, socket } = await boardWithTenLogged();
  socket.stalled = new Promise(() => undefined); // the client never reads again
  void hub.message(socket, JSON.stringify({ type: 'subscribe', boardId, topics: ['activity'], since: 0 }));
  await until(() => socket.sent('subscribed').length > 0);

  const frame = eventFrame(boardId, update(boardId, 11)).byteLength;
  const batches = Math.ceil((2 * SLOW_CONSUMER.bytes) / frame / 100);
  let seq = 10;
  const deliver = () =>
    hub.deliver(
      boardId,
      Array.from({ length: 100 }, () => update(boardId, ++seq)),
    );
  // Half the cap is held for it and it stays open; past the cap it is closed.
  while ((seq - 10 + 100) * frame < SLOW_CONSUMER.bytes / 2) deliver();
  expect(socket.closedWith).toBeNull();
  for (let i = 0; i < batches; i++) deliver();
  expect(socket.closedWith).toBe(CLOSE.slowConsumer);
});

it('counts only what the socket would be sent: another topic’s events held for it close nothing', async () => {
  const { boardId, hub, socket } = await boardWithTenLogged();
  socket.stalled = new Promise(() => undefined); // paused mid-replay
  void hub.message(socket, JSON.stringify({ type: 'subscribe', boardId, topics: ['leases'], since: 0 }));
  await until(() => socket.sent('subscribed').length > 0);
  // Twice the cap of item events, none of them on the leases topic.
  const frame = eventFrame(boardId, update(boardId, 11)).byteLength;
  let seq = 10;
  const n = Math.ceil((2 * SLOW_CONSUMER.bytes) / frame);
  hub.deliver(
    boardId,
    Array.from({ length: n }, () => update(boardId, ++seq)),
  );
  expect(n).toBeLessThan(SLOW_CONSUMER.heldEvents);
  expect(socket.closedWith).toBeNull();
  // Though not without end: each is kept until the replay ends, so past a count it is closed too.
  hub.deliver(
    boardId,
    Array.from({ length: SLOW_CONSUMER.heldEvents }, () => update(boardId, ++seq)),
  );
  expect(socket.closedWith).toBe(CLOSE.slowConsumer);
});
