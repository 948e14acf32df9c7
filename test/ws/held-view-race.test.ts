// A subscription's `held` (the items whose lease its `claims` token holds) is the holder's leases
// as of the subscription's start, read from the board state the start point comes from (the head,
// or a snapshot read again). It was once read when the subscribe was let in: a lease ending in
// between had its event at or before the start seq, never passed followLease, and the token was
// sent the item's events for as long as the subscription lasted. Both start points are tried.
import { describe, expect, it } from 'vitest';
import type { Committed, CommittedEvent } from '../../actors/board-actor.js';
import { claim, leaseAction } from '../../machines/lease-commands.js';
import type { Identity } from '../../src/auth/identity.js';
import type { ProjectSelector } from '../../src/auth/project-selection.js';
import { BoardFeed } from '../../src/board/feed/feed.js';
import type { ResolutionObserver } from '../../src/errors/observed-resolution.js';
import { Hub } from '../../src/ws/hub.js';
import type { BoardRecord, TokenRecord } from '../../store/ports/store.js';
import { boardWith, run } from '../board/build.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { until } from '../support/until.js';
import { FakeSocket } from './hub-rig.js';

const used = useStore();
const NOW = Date.now();

describe('a claims token’s subscription', () => {
  it.each([
    ['after the head', false],
    ['from a snapshot', true],
  ])(
    'is not sent its item’s events after a lease that ended while the subscribe was let in (%s)',
    async (_, snapshot) => {
      const boardId = unique('board');
      const principal = 'agent:claimer';
      const leased = run(
        boardWith(NOW, 3),
        claim({ principal, workId: 'W-1', purpose: 'work', ttlMs: 600_000, leaseId: 'lease-1' }),
        NOW,
      ).board;
      const released = run(
        leased,
        leaseAction({ principal, leaseId: 'lease-1', action: 'release', ttlMs: null }),
        NOW + 1,
      ).board;
      await used.store.boards.insert({ _id: boardId, version: 1, lastSeq: 1 } as unknown as BoardRecord);
      const tokenId = unique('tok');
      await used.store.tokens.insert({
        _id: tokenId,
        version: 1,
        accountId: 'acct-1',
        agentId: 'claimer',
        secretHash: unique('h'),
        prefix: 'p1',
        name: 'claimer',
        scope: 'resource',
        boardId,
        role: 'member',
        resources: ['claims'],
        expiresAt: null,
        lastUsedAt: null,
        revoked: false,
        createdAt: NOW,
      } as unknown as TokenRecord);
      const identity: Identity = {
        kind: 'token',
        principal,
        accountId: 'acct-1',
        tokenId,
        agentId: 'claimer',
        scope: 'resource',
        prefix: 'p1',
        boardId,
        role: 'member',
        resources: ['claims'],
      };

      // The board as the actor holds it: W-1 leased to the token, until the release commits.
      let current = leased;
      const release: CommittedEvent = {
        boardId,
        seq: 2,
        type: 'lease.released',
        actor: principal,
        workId: 'W-1',
        at: NOW + 1,
        data: {
          lease: { holder: principal, purpose: 'work', fencingToken: 1, expiresAt: new Date(NOW).toISOString() },
        },
      };
      const sockets: FakeSocket[] = [];
      const hub: Hub = new Hub({
        selector: {
          reachable: async (_identity: Identity, id: string) => ({
            id,
            name: 'board',
            role: 'member',
            plan: 'free',
            owned: false,
          }),
          closedTo: async () => false,
        } as unknown as ProjectSelector,
        store: used.store,
        feed: new BoardFeed({
          store: used.store,
          readBoard: async () => ({ board: current, record: { lastSeq: current === released ? 2 : 1 } }) as Committed,
          syncLog: async () => undefined,
          clock: () => Date.now(),
        }),
        stillValid: async () => true,
        observer: { resolution: () => null } as unknown as ResolutionObserver,
        publicUrl: 'http://board.test',
        clock: () => Date.now(),
        // The release commits while the subscribe is being let in (between its held read and its start).
        hear: async () => {
          current = released;
          await used.store.events.insert({ _id: `${boardId}:2`, ...release } as never).catch(() => undefined);
          await used.store.boards.update(boardId, 1, { lastSeq: 2 } as never);
          hub.deliver(boardId, [release]);
        },
        hearAll: async () => undefined,
        publish(topic, message) {
          for (const s of sockets) if (s.topics.has(topic)) s.hear(message, 'publish');
        },
      });
      const socket = new FakeSocket(identity);
      sockets.push(socket);
      hub.open(socket);
      await hub.message(socket, JSON.stringify({ type: 'subscribe', boardId, topics: ['activity'], snapshot }));
      await until(() => socket.sent('subscribed').length === 1);
      expect(socket.sent('subscribed')[0]).toMatchObject({ seq: 2 });
      // A snapshot of the board as it stands after the release shows it nothing of W-1 either.
      const cards = socket.got.flatMap((m) => (m.type === 'snapshot' ? (m.items as { workId: string }[]) : []));
      expect(cards.map((c) => c.workId)).toEqual([]);

      // W-1 is no longer the token's: a comment on it afterwards is none of its business.
      hub.deliver(boardId, [
        {
          boardId,
          seq: 3,
          type: 'item.comment',
          actor: 'user:o',
          workId: 'W-1',
          at: NOW + 2,
          data: { text: 'not yours' },
        },
      ]);
      await new Promise((r) => setTimeout(r, 100));
      const w1 = socket.events().filter((m) => m.event?.workId === 'W-1' && !String(m.event.type).startsWith('lease.'));
      expect(
        w1.map((m) => m.event.type),
        'the subscription kept W-1 open after its lease ended',
      ).toEqual([]);
    },
  );
});
