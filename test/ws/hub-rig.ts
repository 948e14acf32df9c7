// A hub on simulated sockets over a real store's log, for socket tests that need no transport: what
// each socket was sent and by which path (a send to it, or a publish to a topic it joined), how it
// was closed, a client that stops reading, and access reads the test holds open, so a subscribe's
// order against what comes meanwhile is the test's to decide.
import type { Committed } from '../../actors/board-actor.js';
import { emptyBoard } from '../../machines/board.js';
import type { Identity } from '../../src/auth/identity.js';
import type { ProjectSelector } from '../../src/auth/project-selection.js';
import { BoardFeed } from '../../src/board/feed/feed.js';
import type { ResolutionObserver } from '../../src/errors/observed-resolution.js';
import { Hub, type Connection } from '../../src/ws/hub.js';
import type { Store } from '../../store/ports/store.js';
import { unique } from '../support/temp.js';

/** A message as the socket was sent it, and `via` the path that carried it. */
export type Sent = { type: string; via: 'send' | 'publish'; [field: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A socket as the hub sees it: what it was sent, and the code it was closed with. */
export class FakeSocket implements Connection {
  static next = 1;
  readonly id = FakeSocket.next++;
  readonly topics = new Set<string>();
  readonly got: Sent[] = [];
  closedWith: number | null = null;
  /** While set, the client reads nothing: a backlog past any replay's pace waits until it resolves. */
  stalled: Promise<void> | null = null;
  /** How often a sender waited for the client to read. */
  waitedOn = 0;
  constructor(readonly identity: Identity) {}
  send(message: string | Uint8Array): boolean {
    this.hear(message, 'send');
    return true;
  }
  hear(message: string | Uint8Array, via: Sent['via']): void {
    const m = JSON.parse(typeof message === 'string' ? message : Buffer.from(message).toString());
    this.got.push({ ...m, via });
  }
  backlog = () => (this.stalled ? Infinity : 0);
  drained = () => {
    this.waitedOn++;
    return this.stalled ?? Promise.resolve();
  };
  join = (topic: string) => void this.topics.add(topic);
  leave = (topic: string) => void this.topics.delete(topic);
  close(code: number): void {
    this.closedWith ??= code;
  }
  /** The messages of `type` it was sent. */
  sent = (type: string) => this.got.filter((m) => m.type === type);
  events = () => this.sent('event');
}

/** Reads that wait while the test holds them: `waiting` counts those held now. */
export class Gate {
  private held: (() => void)[] | null = null;
  get waiting(): number {
    return this.held?.length ?? 0;
  }
  hold(): void {
    this.held ??= [];
  }
  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const go of held) go();
  }
  pass(): Promise<void> {
    return this.held === null ? Promise.resolve() : new Promise((go) => this.held!.push(go));
  }
}

/**
 * A hub on `store` where every board is reachable as a member, each reach read passing `reach` first;
 * `hear` is the bus's (by default one node: every commit is delivered here, at once), and a publish
 * reaches the rig's sockets that joined its topic.
 */
export function hubRig(
  store: Store,
  { hear = async () => undefined }: { hear?: (boardId: string) => Promise<void> } = {},
) {
  const reach = new Gate();
  const sockets: FakeSocket[] = [];
  let publishes = 0;
  const hub = new Hub({
    selector: {
      reachable: async (_identity: Identity, id: string) => {
        await reach.pass();
        return { id, name: 'board', role: 'member', plan: 'free', owned: false };
      },
      closedTo: async () => false,
    } as unknown as ProjectSelector,
    store,
    feed: new BoardFeed({
      store,
      // No snapshots here; a board holding no lease for the leases a narrow view asks after, at the
      // stored board's seq (a subscription holding leases starts there: BoardFeed.startAfter).
      readBoard: async (boardId) => {
        const [record] = await store.boards.select({ _id: boardId }, ['lastSeq']);
        return { board: emptyBoard(), record: { lastSeq: record?.lastSeq ?? 0 } } as Committed;
      },
      syncLog: async () => undefined,
      clock: () => Date.now(),
    }),
    stillValid: async () => true,
    observer: { resolution: () => null } as unknown as ResolutionObserver,
    publicUrl: 'http://board.test',
    clock: () => Date.now(),
    hear,
    hearAll: async () => undefined,
    publish(topic, message) {
      publishes++;
      for (const s of sockets) if (s.topics.has(topic)) s.hear(message, 'publish');
    },
  });
  const open = (
    identity: Identity = {
      kind: 'session',
      principal: `user:${unique('u')}`,
      accountId: unique('acct'),
      sessionId: unique('sess'),
    },
  ) => {
    const socket = new FakeSocket(identity);
    sockets.push(socket);
    hub.open(socket);
    return socket;
  };
  return { hub, open, reach, publishes: () => publishes };
}
