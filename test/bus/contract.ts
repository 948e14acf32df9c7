// The bus contract, run against memory and Redis: what a node publishes reaches its own handlers
// once, at once.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CommittedEvent } from '../../actors/board-actor.js';
import type { Bus } from '../../src/bus/bus.js';
import { quietFor } from '../support/until.js';

export const batch = (boardId: string, from: number, n = 2): CommittedEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    boardId,
    seq: from + i,
    type: 'item.created',
    actor: 'agent:x',
    workId: `W-${from + i}`,
    at: 1,
    data: {},
  }));

export function busContract(name: string, make: () => Promise<Bus>): void {
  describe(`bus contract: ${name}`, () => {
    it('delivers a published batch to every handler of the node, once, synchronously', async () => {
      const bus = await make();
      const board = `board-${randomUUID()}`; // a bus shared with other suites hears their boards too
      const a: CommittedEvent[][] = [];
      const b: CommittedEvent[][] = [];
      bus.subscribe((id, events) => id === board && a.push(events));
      const off = bus.subscribe((id, events) => id === board && b.push(events));
      bus.publish(board, batch(board, 1));
      expect(a).toEqual([batch(board, 1)]);
      expect(b).toEqual([batch(board, 1)]);
      off();
      bus.publish(board, batch(board, 3));
      await quietFor(100); // proves the unsubscribed handler hears nothing later either (say, over Redis)
      expect(a).toHaveLength(2);
      expect(b).toHaveLength(1);
      await bus.close();
    });

    it('calls each listener for its own kind of notice, this node included, until it is removed', async () => {
      const bus = await make();
      const mark = randomUUID(); // a bus shared with other suites hears their notices too
      const pings: string[] = [];
      const pongs: string[] = [];
      const everything: string[] = [];
      const off = bus.listen({
        'test.ping': (n: { mark: string }) => n.mark === mark && pings.push(n.mark),
        'test.pong': (n: { mark: string }) => n.mark === mark && pongs.push(n.mark),
      });
      bus.onNotice((n: { kind: string; mark?: string }) => n.mark === mark && everything.push(n.kind));
      bus.notify({ kind: 'test.ping', mark });
      bus.notify({ kind: 'test.ping', mark });
      bus.notify({ kind: 'test.pong', mark });
      expect(pings).toEqual([mark, mark]);
      expect(pongs).toEqual([mark]);
      expect(everything).toEqual(['test.ping', 'test.ping', 'test.pong']);
      off();
      bus.notify({ kind: 'test.ping', mark });
      await quietFor(100); // proves a removed listener hears nothing later either (say, over Redis)
      expect(pings).toHaveLength(2);
      expect(everything).toHaveLength(4);
      await bus.close();
    });
  });
}
