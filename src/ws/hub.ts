// The sockets of this node and the socket protocol: their messages, and what this node fans out to
// them. A subscription (subscribe.ts) starts from the log (`since`) or from a snapshot of the board,
// read through the board's feed (src/board/feed/), then goes live; every event is sent once and in
// seq order (delivery.ts), and once caught up, a whole view's events go out as one publish per event
// and topic (board-stream.ts). Shouts, lease news and the roster fan out as the notices bring them;
// access changes end subscriptions (access-changes.ts). An operator's socket may watch any board
// read-only and the firehose (operator-access.ts, firehose.ts). Frames name their actors where the
// node knows them (names.ts): a page shows agents by their tokens' names, not by ids.
import type { CommittedEvent } from '../../actors/board-actor.js';
import type { Identity } from '../auth/identity.js';
import type { ProjectSelector } from '../auth/project-selection.js';
import type { BoardFeed } from '../board/feed/feed.js';
import { presenceView } from '../board/presence.js';
import { agentAsSeen } from '../board/visibility.js';
import type { MembershipNotice, RevokedNotice } from '../auth/access-notices.js';
import type { RecordsChangedNotice } from '../auth/identity-cache.js';
import type { LeaseEndedNotice, LeaseExpiringNotice, PresenceNotice, ShoutNotice } from '../board/notices.js';
import type { CatchUpNotice } from '../bus/bus.js';
import type { ResolutionObserver } from '../errors/observed-resolution.js';
import { describeIssue } from '../errors/validation-issue.js';
import { andThen, orElse } from '../../store/ports/maybe.js';
import type { Store } from '../../store/ports/store.js';
import { AccessChanges } from './access-changes.js';
import { AccessChecks } from './access-checks.js';
import { BoardStreams } from './board-stream.js';
import { presenceMessage } from './board-view.js';
import { MESSAGES_SPENT, SocketBudgets } from './budget.js';
import { transmit, type Connection } from './connection.js';
import { Delivery } from './delivery.js';
import { Firehose } from './firehose.js';
import { EventFrames, inSeqOrder } from './frames.js';
import { LeaseNews } from './lease-news.js';
import { Names } from './names.js';
import type { OperatorAccess } from './operator-access.js';
import { ClientMessage, FIREHOSE, FirehoseMessage } from './protocol.js';
import { fanOutShout, type ShoutFanoutDeps } from './shout-fanout.js';
import { SocketErrors } from './socket-errors.js';
import { heldIn, Subscribe } from './subscribe.js';
import { Subscriptions } from './subscriptions.js';
import { rosterTopic } from './topics.js';

export type { Connection } from './connection.js';

export interface HubDeps {
  selector: Pick<ProjectSelector, 'reachable' | 'closedTo'>;
  store: Pick<Store, 'shouts' | 'tokens' | 'presence' | 'accounts'>;
  /** The boards' read side: where a subscription starts, snapshots, the log replayed. */
  feed: BoardFeed;
  /** Whether a socket's credential still stands. */
  stillValid(identity: Identity): Promise<boolean>;
  observer: Pick<ResolutionObserver, 'resolution'>;
  publicUrl: string;
  clock: () => number;
  /** Told of each socket closed for spending its message budget (the operators' abuse view). */
  onOverBudget?: (identity: Identity) => void;
  /** Operators' sockets: any board read-only, and the firehose. Absent, no socket is an operator's. */
  operators?: OperatorAccess;
  /** One message to every socket joined to `topic`, after whatever each was sent before; a slow consumer among them is closed as a send would close it. */
  publish(topic: string, message: string | Uint8Array): void;
  /** Receives other nodes' commits to a board from now on (the bus's `hear`): a subscription reads the log once it does. */
  hear(boardId: string): Promise<void>;
  /** Receives every board's commits while `on` (the bus's `hearAll`): while the firehose is open here. */
  hearAll(on: boolean): Promise<void>;
}

/** The notices the hub acts on. */
export type SocketNotice =
  | ShoutNotice
  | PresenceNotice
  | LeaseExpiringNotice
  | LeaseEndedNotice
  | MembershipNotice
  | RevokedNotice
  | RecordsChangedNotice
  | CatchUpNotice;

export class Hub {
  private readonly subscriptions: Subscriptions;
  private readonly streams: BoardStreams;
  private readonly names: Names;
  private readonly frames: EventFrames;
  private readonly firehose: Firehose<Connection>;
  private readonly budgets: SocketBudgets;
  private readonly errors: SocketErrors;
  private readonly changes: AccessChanges;
  private readonly delivery: Delivery;
  private readonly leases: LeaseNews;
  private readonly subscribes: Subscribe;
  private readonly shouts: ShoutFanoutDeps;

  constructor(private readonly deps: HubDeps) {
    const { clock, operators, store, feed } = deps;
    const publish = (topic: string, message: string | Uint8Array) => deps.publish(topic, message);
    const names = (this.names = new Names({ store, clock }));
    const nameOf = (principal: string) => names.nameOf(principal);
    this.frames = new EventFrames(nameOf);
    // The streams and the subscriptions index each other's: each asks the other only once both exist.
    this.streams = new BoardStreams({
      publish,
      frame: (boardId, e) => this.frames.of(boardId, e),
      watchersOf: (boardId) => this.subscriptions.watchersOf(boardId) ?? [],
    });
    this.subscriptions = new Subscriptions((conn, boardId, sub) => this.streams.leave(conn, boardId, sub));
    this.firehose = new Firehose({
      clock,
      transmit,
      hearAll: (on) => deps.hearAll(on),
      // Operators see people's addresses: one without a display name shows by it.
      actorName: (principal: string) => names.nameOf(principal, true),
      ...(operators && {
        boardName: (boardId: string) => operators.boardName(boardId),
        ownerEmail: (boardId: string) => operators.ownerEmail(boardId),
      }),
    });
    const windowOf = (conn: Connection) => this.subscriptions.state(conn);
    this.budgets = new SocketBudgets({ clock, windowOf, onOverBudget: deps.onOverBudget });
    this.errors = new SocketErrors(deps);
    const { subscriptions, streams, frames, firehose, budgets, errors } = this;
    const stillValid = (identity: Identity) => deps.stillValid(identity);
    const access = new AccessChecks({
      selector: deps.selector,
      tokens: store.tokens,
      stillValid,
      clock,
      operators,
      subscriptions,
      heldBack: (conn, boardId, events) => this.leases.tell(conn, boardId, events),
    });
    this.changes = new AccessChanges({ subscriptions, access, firehose, operators, stillValid });
    const delivery = (this.delivery = new Delivery({ feed, subscriptions, streams, frames }));
    this.leases = new LeaseNews({ subscriptions, streams: this.streams, access, frames, clock });
    this.subscribes = new Subscribe({
      hear: (boardId) => deps.hear(boardId),
      feed,
      store,
      names,
      subscriptions,
      streams,
      access,
      delivery,
      budgets,
      errors,
      operators,
    });
    this.shouts = { subscriptions, shouts: store.shouts, publish, clock };
  }

  open(conn: Connection): void {
    this.subscriptions.open(conn, this.deps.clock());
  }

  close(conn: Connection): void {
    this.subscriptions.close(conn);
    this.firehose.unwatch(conn);
  }

  get size(): number {
    return this.subscriptions.size;
  }

  /** The open sockets. */
  connections(): IterableIterator<Connection> {
    return this.subscriptions.connections();
  }

  /** When a socket opened (by the hub's clock); undefined once it closed. */
  openedAt(conn: Connection): number | undefined {
    return this.subscriptions.openedAt(conn);
  }

  closeAll(code: number, reason: string): void {
    for (const conn of [...this.subscriptions.connections()]) conn.close(code, reason);
  }

  /** What the hub does with each notice from any node: shouts, heartbeats and lease warnings and ends go out to sockets, access changes close or unsubscribe them, and a catch-up after the bus was down brings every subscription up to the log. */
  readonly hears: { [K in SocketNotice['kind']]: (notice: Extract<SocketNotice, { kind: K }>) => void } = {
    shout: (notice) => fanOutShout(this.shouts, notice.boardId, notice.shout),
    presence: (notice) => this.heartbeat(notice),
    'lease.expiring': (notice) => this.leases.expiring(notice),
    'lease.ended': (notice) => this.leases.ended(notice),
    membership: (notice) => this.changes.membership(notice),
    revoked: (notice) => this.changes.revoked(notice),
    // An operator's standing is their account's: one written may no longer be an operator.
    'records.changed': (notice) =>
      void (notice.collection === 'accounts' ? this.changes.accountsChanged(notice.ids) : undefined),
    'catch-up': (notice) =>
      void (notice.boardId === undefined
        ? Promise.all([this.delivery.catchUpAll(), this.revalidate()])
        : this.delivery.catchUpBoard(notice.boardId)),
  };

  /**
   * A heartbeat to the board's roster sockets, with the agent's name: read first when this node has
   * not read it yet (a new agent's first beat), so a page names every agent it has seen beat. Beats
   * of one agent keep their order: each waits for the same read, in turn.
   */
  private heartbeat(notice: PresenceNotice): void {
    const { boardId, presence } = notice;
    const send = () => {
      const name = this.names.nameOf(presence.principal);
      const agent = presenceView(presence);
      this.deps.publish(rosterTopic(boardId), presenceMessage(boardId, agent, name)); // the whole views'
      // A narrower view is told the item the agent works on only if it sees it, and its note only if
      // it sees every item the agent holds too (agentAsSeen): those the board holds now, read once
      // for them all (null when it cannot be read: the note is then cut).
      const watchers = this.subscriptions.watchersOf(boardId);
      const narrow = [...(this.subscriptions.narrowOf(boardId) ?? [])].flatMap((conn) => {
        const sub = watchers?.get(conn);
        return sub?.topics.has('presence') ? [{ conn, sub }] : [];
      });
      if (!narrow.length) return;
      const tell = (holds: readonly string[] | null) => {
        for (const { conn, sub } of narrow)
          if (this.subscriptions.current(conn, boardId, sub))
            transmit(conn, presenceMessage(boardId, agentAsSeen(sub.view, agent, holds), name));
      };
      const held = () => andThen(this.deps.feed.board(boardId), (board) => heldIn(board, presence.principal));
      void andThen(narrow.some(({ sub }) => sub.view.items !== null) ? orElse(held, null) : null, tell);
    };
    if (this.names.has(presence.principal)) return send();
    void this.names.learn([presence.principal]).then(send);
  }

  /**
   * Whether a socket here watches the board: subscribed to it, or on the firehose. A board nobody
   * here watches needs none of its committed events (a holder hears its lease's end as a notice).
   */
  watches(boardId: string): boolean {
    return this.subscribedTo(boardId) || this.firehose.open;
  }

  /** Whether a socket here subscribes to the board (the firehose aside). */
  subscribedTo(boardId: string): boolean {
    return this.subscriptions.watchersOf(boardId) !== undefined;
  }

  /** A committed batch from the bus: to the board's watchers here. */
  deliver(boardId: string, batch: CommittedEvent[]): void {
    if (!this.watches(boardId)) return;
    const events = inSeqOrder(batch);
    // Names this node has not read yet are read now: frames built meanwhile carry ids, later ones names.
    void this.names.learn(events.map((e) => e.actor));
    this.firehose.deliver(boardId, events);
    this.streams.publish(boardId, events);
    this.delivery.live(boardId, events);
  }

  /** Closes the sockets whose credential no longer stands, and ends the watches whose role changed unheard (access-changes.ts). */
  revalidate(): Promise<void> {
    return this.changes.revalidate();
  }

  async message(conn: Connection, text: string): Promise<void> {
    if (!this.budgets.charge(conn, 1, MESSAGES_SPENT)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.errors.send(conn, 'INVALID_JSON', 'The message is not well-formed JSON.');
    }
    const result = ClientMessage.safeParse(parsed);
    if (!result.success) {
      const firehose = FirehoseMessage.safeParse(parsed);
      if (firehose.success && (await this.deps.operators?.admits(conn.identity)))
        return this.firehoseMessage(conn, firehose.data);
      return this.errors.send(conn, 'INVALID_INPUT', describeIssue(result.error.issues[0]!, 'message'));
    }
    const msg = result.data;
    if (msg.type === 'ping') return void transmit(conn, JSON.stringify({ type: 'pong' }));
    if (msg.type === 'unsubscribe') {
      this.subscribes.cancel(conn, msg.boardId);
      this.subscriptions.unwatch(conn, msg.boardId);
      return void transmit(conn, JSON.stringify({ type: 'unsubscribed', boardId: msg.boardId }));
    }
    await this.subscribes.subscribe(conn, msg.boardId, new Set(msg.topics), {
      since: msg.since,
      snapshot: msg.snapshot === true,
      shoutsAfter: msg.shoutsAfter,
    });
  }

  /** An operator's firehose subscribe (audited when it starts; sent again, it changes the filter) or unsubscribe. */
  private async firehoseMessage(conn: Connection, msg: FirehoseMessage): Promise<void> {
    if (msg.type === 'unsubscribe') {
      this.firehose.unwatch(conn);
      return void transmit(conn, JSON.stringify({ type: 'unsubscribed', topics: ['firehose'] }));
    }
    const filter = { ...(msg.boards && { boards: msg.boards }), ...(msg.types && { types: msg.types }) };
    if (!this.firehose.watching(conn)) {
      const audit = { action: 'firehose', target: 'firehose', data: { ...filter, socket: conn.id } } as const;
      const audited = await this.deps.operators!.audit(conn.identity, audit).then(
        () => true,
        () => false,
      );
      if (!audited)
        return this.errors.send(
          conn,
          'SERVICE_UNAVAILABLE',
          'The audit row of this subscription could not be written; subscribe again.',
        );
      if (!this.subscriptions.isOpen(conn)) return; // closed meanwhile
    }
    this.firehose.watch(conn, filter);
    await this.changes.recheckFirehose([conn]); // demoted while let in: it is told `unsubscribed`
    if (!this.firehose.watching(conn)) return;
    await this.firehose.hearing; // every board's commits come here before the socket is told it is on
    transmit(
      conn,
      JSON.stringify({
        type: 'subscribed',
        topics: ['firehose'],
        boards: msg.boards ?? null,
        types: msg.types ?? null,
        perSecond: FIREHOSE.perSecond,
      }),
    );
  }
}
