// The sockets of this node and their board subscriptions. A subscription starts from the log
// (`since`) or from the board's current seq, then goes live; every event is sent once and in
// seq order: events older than what was sent are dropped, and a hole (a lost bus message) is
// filled from the log before anything after it goes out. A subscription may instead start from a
// snapshot of the board (board-view.ts), and may watch the roster (`presence`). An operator's
// socket may watch any board read-only and the firehose (operator-access.ts, firehose.ts). What
// every watcher of a board hears alike goes out as one publish to a topic of the engine's: its
// events once a subscription has caught up (the board's stream, see Stream), its broadcast shouts
// and its roster; the rest is sent socket by socket.
import type { Committed, CommittedEvent } from '../../actors/board-actor.js';
import type { Identity } from '../auth/identity.js';
import type { ProjectSelector, SelectedProject } from '../auth/project-selection.js';
import { errorEnvelope, errorRecord } from '../errors/envelope.js';
import type { ResolutionNote, ResolutionObserver } from '../errors/observed-resolution.js';
import type { ErrorCode } from '../errors/registry.js';
import { describeIssue } from '../errors/validation-issue.js';
import type { Store } from '../../store/ports/store.js';
import type { Maybe } from '../../store/ports/maybe.js';
import {
  CLOSE,
  ClientMessage,
  FIREHOSE,
  FirehoseMessage,
  SLOW_CONSUMER_REASON,
  snapshotCost,
  SOCKET_BUDGET,
  topicOf,
  type Topic,
} from './protocol.js';
import { Firehose } from './firehose.js';
import type { OperatorAccess, OperatorView } from './operator-access.js';
import type { Notice } from '../bus/bus.js';
import { presenceView } from '../board/presence.js';
import { missedShouts, presenceMessage, rosterMessage, snapshotMessages } from './board-view.js';
import { boardViewOf, eventAsSeen, mayRead, seesShout, seesWholeBoard, type BoardView } from '../board/visibility.js';

export interface Connection {
  readonly id: number;
  readonly identity: Identity;
  /** False when the message was dropped for backpressure. A frame is a text message already encoded as UTF-8. */
  send(message: string | Uint8Array): boolean;
  /** Bytes waiting to go out. */
  backlog(): number;
  /** Resolves once the backlog has gone out (or the connection closed). */
  drained(): Promise<void>;
  /** From now on the socket hears what is published to `topic` (HubDeps.publish), until it leaves it. */
  join(topic: string): void;
  leave(topic: string): void;
  close(code: number, reason: string): void;
}

interface Subscription {
  topics: Set<Topic>;
  /** The socket's role on the board when it subscribed; a later change ends the subscription. */
  role: string;
  /** What the socket may see of the board (src/board/visibility.ts), as REST reads do. */
  view: BoardView;
  /** The view takes in the whole board: its events and broadcast shouts go out as publishes; else each is sent as the view sees it. */
  whole: boolean;
  /** The last seq sent (or skipped by topic); -1 until the start point is known. While joined, the board stream's instead. */
  lastSeq: number;
  /** Live events held while the log is being read; null when live. */
  held: CommittedEvent[] | null;
  /** On the board's event stream (its events published to the engine's topics), not sent one by one. */
  joined: boolean;
}

/**
 * A board's events published once to the engine's topics, for its subscriptions that are live and
 * have had every event up to `published` (each joins when it is, see Hub.joinStream): the common
 * case costs one publish per event and topic, not one send per socket.
 */
interface Stream {
  /** The last seq published; every joined subscription has had each event up to it, in order. */
  published: number;
  /** Subscriptions on it; the stream ends with the last one. */
  joined: number;
}

/** A socket's subscriptions and what it has spent of its budget. */
interface SocketState {
  /** The boards it watches; made on the first subscribe. */
  subs: Map<string, Subscription> | null;
  /** Start of the current message window, and messages in it. */
  windowStart: number;
  used: number;
  /** The replay running per board (at most one per socket and board). */
  replays: Map<string, Promise<void>> | null;
  /** The account the credential acts for now: a token moves with a board takeover. */
  accountId: string;
}

export interface HubDeps {
  selector: ProjectSelector;
  store: Pick<Store, 'boards' | 'events' | 'shouts' | 'tokens' | 'presence'>;
  /** The board as last committed, for a subscription that starts from a snapshot. */
  readBoard(boardId: string): Maybe<Committed>;
  /** Copies a board's last commit into the log if it is not there yet. */
  syncLog(boardId: string): Promise<void>;
  /** Whether a socket's credential still stands. */
  stillValid(identity: Identity): Promise<boolean>;
  observer: ResolutionObserver;
  publicUrl: string;
  clock: () => number;
  /** Told of each socket closed for spending its message budget (the operators' abuse view). */
  onOverBudget?: (identity: Identity) => void;
  /** Operators' sockets: any board read-only, and the firehose. Absent, no socket is an operator's. */
  operators?: OperatorAccess;
  /** One message to every socket joined to `topic`, after whatever each was sent before; a slow consumer among them is closed as a send would close it. */
  publish(topic: string, message: string | Uint8Array): void;
}

const REPLAY_PAGE = 500;
/** A replay waits for the client to read once this much is waiting to go out (well under the slow-consumer cap). */
const REPLAY_BACKLOG = 256 * 1024;
/** A gap in the log is waited out this many times, this long each, before the socket is told to reconnect. */
const LOG_GAP_WAITS = 40;
const LOG_GAP_WAIT_MS = 50;
/** A subscribe whose membership read raced a membership change reads again, at most this often. */
const MEMBERSHIP_READS = 4;

/** A subscribe between its membership read and its watch: a membership notice meanwhile makes it read again. */
interface Probe {
  conn: Connection;
  boardId: string;
  stale: boolean;
  /** The topics the subscribe under way asks for. */
  topics: ReadonlySet<Topic>;
  /** The holder's lease endings held back meanwhile: the subscription will carry them; sent if it does not come about. */
  heldBack?: (string | Uint8Array)[];
}

/** Whether a subscription with `topics` carries a lease's end (its holder then needs no frame of its own). */
const carriesLeaseEnds = (topics: ReadonlySet<Topic>): boolean => topics.has('leases') || topics.has('activity');
/** Whether a subscription with `topics` hears the board's shouts. */
const hearsShouts = (topics: ReadonlySet<Topic>): boolean => topics.has('shouts') || topics.has('activity');

/** The engine's topics of a board: its broadcast shouts (not direct ones), its roster. */
const shoutsTopic = (boardId: string): string => `shouts/${boardId}`;
const rosterTopic = (boardId: string): string => `presence/${boardId}`;

/**
 * What goes alike to every watcher of a board with a topic is published once, to a topic of the
 * engine's: the board's shouts to all, and its roster, from the subscribe on; its events once the
 * subscription has caught up (streamTopics). Direct shouts, a holder's own lease news and what a
 * narrower view sees (a resource token's) are sent socket by socket.
 */
const broadcastTopics = (boardId: string, sub: Pick<Subscription, 'topics' | 'whole'>): string[] => [
  ...(sub.whole && hearsShouts(sub.topics) ? [shoutsTopic(boardId)] : []),
  ...(sub.topics.has('presence') ? [rosterTopic(boardId)] : []),
];

/** Each board event is published to its topic's and to activity's: a subscription joins activity's alone, or each of its event topics' (presence is no event topic). */
const eventTopic = (boardId: string, topic: Topic): string => `events/${boardId}/${topic}`;
const streamTopics = (boardId: string, topics: ReadonlySet<Topic>): string[] =>
  topics.has('activity')
    ? [eventTopic(boardId, 'activity')]
    : [...topics].filter((t) => t !== 'presence').map((t) => eventTopic(boardId, t));

export class Hub {
  /** Each socket's subscriptions by board, and its budget. */
  private readonly connections = new Map<Connection, SocketState>();
  /** The same subscriptions by board, so a board's event touches only its own watchers. */
  private readonly watchers = new Map<string, Map<Connection, Subscription>>();
  /** Sockets by principal, for what goes to one holder whatever it watches. */
  private readonly principals = new Map<string, Set<Connection>>();
  private errors = 0;
  private readonly frames = new WeakMap<CommittedEvent, Uint8Array>();
  private readonly probes = new Set<Probe>();
  private readonly firehose: Firehose<Connection>;
  /** Boards with subscriptions on their event stream. */
  private readonly streams = new Map<string, Stream>();
  /** The subscriptions of narrower views by board: their broadcast shouts are sent one by one. */
  private readonly narrow = new Map<string, Set<Connection>>();

  constructor(private readonly deps: HubDeps) {
    const operators = deps.operators;
    this.firehose = new Firehose({
      clock: deps.clock,
      transmit: (conn, message) => this.transmit(conn, message),
      ...(operators && { boardName: (boardId: string) => operators.boardName(boardId) }),
    });
  }

  open(conn: Connection): void {
    this.connections.set(conn, {
      subs: null,
      windowStart: this.deps.clock(),
      used: 0,
      replays: null,
      accountId: conn.identity.accountId,
    }); // subs and replays: made on the first subscribe (an idle socket holds less)
    const principal = conn.identity.principal;
    (this.principals.get(principal) ?? this.principals.set(principal, new Set()).get(principal)!).add(conn);
  }

  close(conn: Connection): void {
    for (const boardId of this.connections.get(conn)?.subs?.keys() ?? []) this.unwatch(conn, boardId);
    this.firehose.unwatch(conn);
    this.connections.delete(conn);
    const same = this.principals.get(conn.identity.principal);
    if (same?.delete(conn) && same.size === 0) this.principals.delete(conn.identity.principal);
  }

  private watch(conn: Connection, boardId: string, sub: Subscription): void {
    const state = this.connections.get(conn);
    if (state) (state.subs ??= new Map()).set(boardId, sub);
    (this.watchers.get(boardId) ?? this.watchers.set(boardId, new Map()).get(boardId)!).set(conn, sub);
    if (!sub.whole) (this.narrow.get(boardId) ?? this.narrow.set(boardId, new Set()).get(boardId)!).add(conn);
    for (const topic of broadcastTopics(boardId, sub)) conn.join(topic);
  }

  /** Ends a socket's subscription to a board; false when there was none. */
  private unwatch(conn: Connection, boardId: string): boolean {
    const board = this.watchers.get(boardId);
    const sub = board?.get(conn);
    if (sub) {
      for (const topic of broadcastTopics(boardId, sub)) conn.leave(topic);
      this.leaveStream(conn, boardId, sub);
      const narrow = this.narrow.get(boardId);
      if (narrow?.delete(conn) && narrow.size === 0) this.narrow.delete(boardId);
    }
    if (board?.delete(conn) && board.size === 0) this.watchers.delete(boardId);
    return this.connections.get(conn)?.subs?.delete(boardId) ?? false;
  }

  get size(): number {
    return this.connections.size;
  }

  /** A notice from any node about sockets: a shout, a lease warning, revoked credentials, or a catch-up after the bus was down. */
  notice(
    notice: Exclude<
      Notice,
      ResolutionNote | { kind: 'node.figures' } | { kind: 'allowlist.changed' } | { kind: 'records.changed' }
    >,
  ): void {
    if (notice.kind === 'shout') return this.shout(notice.boardId, notice.shout);
    if (notice.kind === 'catch-up') return void Promise.all([this.catchUpAll(), this.revalidate()]);
    if (notice.kind === 'lease.expiring') {
      const message = JSON.stringify({
        type: 'event',
        boardId: notice.boardId,
        seq: null,
        event: {
          type: 'lease.expiring',
          actor: 'system:lease-scheduler',
          workId: notice.workId,
          at: new Date(this.deps.clock()).toISOString(),
          data: { holder: notice.holder, expiresAt: new Date(notice.expiresAt).toISOString() },
        },
      });
      for (const conn of this.principals.get(notice.holder) ?? []) this.transmit(conn, message);
      return;
    }
    if (notice.kind === 'membership') return this.membershipChanged(notice);
    if (notice.kind === 'presence')
      return this.deps.publish(
        rosterTopic(notice.boardId),
        presenceMessage(notice.boardId, presenceView(notice.presence)),
      );
    this.revoked(notice);
  }

  /** A member's role changed or they left: their sockets stop watching the board (a new subscribe is checked under the new role). */
  private membershipChanged(notice: Extract<Notice, { kind: 'membership' }>): void {
    const reason =
      notice.role === null
        ? 'You are no longer a member of this board.'
        : `Your role on this board is now ${notice.role}; subscribe again.`;
    for (const probe of this.probes)
      if (probe.boardId === notice.boardId && this.accountOf(probe.conn) === notice.accountId) probe.stale = true;
    for (const conn of [...this.connections.keys()]) {
      if (this.accountOf(conn) === notice.accountId) this.drop(conn, notice.boardId, reason);
    }
  }

  /** Ends a subscription the server took away, and tells the socket why. */
  private drop(conn: Connection, boardId: string, reason: string): void {
    if (this.unwatch(conn, boardId)) this.transmit(conn, JSON.stringify({ type: 'unsubscribed', boardId, reason }));
  }

  private accountOf(conn: Connection): string {
    return this.connections.get(conn)?.accountId ?? conn.identity.accountId;
  }

  /** Closes a revoked credential's sockets; a deleted board's watchers are unsubscribed. */
  private revoked(notice: Extract<Notice, { kind: 'revoked' }>): void {
    for (const conn of [...this.connections.keys()]) {
      const id = conn.identity;
      const revoked =
        (id.kind === 'session' && (id.sessionId === notice.sessionId || id.accountId === notice.accountSessions)) ||
        (id.kind === 'token' &&
          (id.tokenId === notice.tokenId || (notice.boardId !== undefined && id.boardId === notice.boardId))) ||
        id.accountId === notice.accountId;
      if (revoked) conn.close(CLOSE.revoked, 'the credential was revoked');
      else if (notice.boardId !== undefined && this.unwatch(conn, notice.boardId)) {
        this.transmit(
          conn,
          JSON.stringify({ type: 'unsubscribed', boardId: notice.boardId, reason: 'The board was deleted.' }),
        );
      }
    }
  }

  closeAll(code: number, reason: string): void {
    for (const conn of [...this.connections.keys()]) conn.close(code, reason);
  }

  async message(conn: Connection, text: string): Promise<void> {
    if (!this.withinBudget(conn))
      return this.overBudget(
        conn,
        `message budget spent: at most ${SOCKET_BUDGET.messages} messages per ${SOCKET_BUDGET.windowMs / 1000} s`,
      );
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.error(conn, 'INVALID_JSON', 'The message is not well-formed JSON.');
    }
    const result = ClientMessage.safeParse(parsed);
    if (!result.success) {
      const firehose = FirehoseMessage.safeParse(parsed);
      if (firehose.success && (await this.deps.operators?.admits(conn.identity)))
        return this.firehoseMessage(conn, firehose.data);
      return this.error(conn, 'INVALID_INPUT', describeIssue(result.error.issues[0]!, 'message'));
    }
    const msg = result.data;
    if (msg.type === 'ping') return void this.transmit(conn, JSON.stringify({ type: 'pong' }));
    if (msg.type === 'unsubscribe') {
      this.unwatch(conn, msg.boardId);
      return void this.transmit(conn, JSON.stringify({ type: 'unsubscribed', boardId: msg.boardId }));
    }
    await this.subscribe(conn, msg.boardId, new Set(msg.topics), {
      since: msg.since,
      snapshot: msg.snapshot === true,
      shoutsAfter: msg.shoutsAfter,
    });
  }

  /** An operator's firehose subscribe (audited when it starts; sent again, it changes the filter) or unsubscribe. */
  private async firehoseMessage(conn: Connection, msg: FirehoseMessage): Promise<void> {
    if (msg.type === 'unsubscribe') {
      this.firehose.unwatch(conn);
      return void this.transmit(conn, JSON.stringify({ type: 'unsubscribed', topics: ['firehose'] }));
    }
    const filter = { ...(msg.boards && { boards: msg.boards }), ...(msg.types && { types: msg.types }) };
    if (!this.firehose.watching(conn)) {
      const audited = await this.deps
        .operators!.audit(conn.identity, {
          action: 'firehose',
          target: 'firehose',
          data: { ...filter, socket: conn.id },
        })
        .then(
          () => true,
          () => false,
        );
      if (!audited)
        return this.error(
          conn,
          'SERVICE_UNAVAILABLE',
          'The audit row of this subscription could not be written; subscribe again.',
        );
      if (!this.connections.has(conn)) return; // closed meanwhile
    }
    this.firehose.watch(conn, filter);
    this.transmit(
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

  private overBudget(conn: Connection, reason: string): void {
    this.deps.onOverBudget?.(conn.identity);
    conn.close(CLOSE.overBudget, reason);
  }

  /** Counts `cost` messages against the socket's budget; false once it is spent. */
  private withinBudget(conn: Connection, cost = 1): boolean {
    const state = this.connections.get(conn);
    if (!state) return false;
    const now = this.deps.clock();
    if (now - state.windowStart >= SOCKET_BUDGET.windowMs) {
      state.windowStart = now;
      state.used = 0;
    }
    state.used += cost;
    return state.used <= SOCKET_BUDGET.messages;
  }

  /** A committed batch from the bus. */
  deliver(boardId: string, batch: CommittedEvent[]): void {
    const events = inSeqOrder(batch);
    this.firehose.deliver(boardId, events);
    this.publish(boardId, events);
    for (const [conn, sub] of this.watchers.get(boardId) ?? []) {
      if (sub.joined) continue;
      if (sub.held) sub.held.push(...events);
      else this.push(conn, boardId, sub, events);
    }
    // A holder hears its own lease ending even when it watches nothing of the board's leases.
    for (const e of events) {
      if (e.type !== 'lease.expired' && e.type !== 'lease.revoked') continue;
      const holder = (e.data as { lease?: { holder?: string } }).lease?.holder;
      for (const conn of (holder !== undefined && this.principals.get(holder)) || []) {
        const sub = this.watchers.get(boardId)?.get(conn);
        if (sub && carriesLeaseEnds(sub.topics)) continue;
        // A subscribe under way that will carry it: a frame now would come again in its replay.
        const probe = sub ? undefined : this.subscribeCarryingLeaseEnds(conn, boardId);
        if (probe) (probe.heldBack ??= []).push(this.frame(boardId, e));
        else this.transmit(conn, this.frame(boardId, e));
      }
    }
  }

  /**
   * Closes the sockets whose credential no longer stands: one that expired, or a revocation this
   * node did not hear of (the bus was down). One store read per credential.
   */
  async revalidate(): Promise<void> {
    const byCredential = new Map<string, Connection[]>();
    for (const conn of this.connections.keys()) {
      const id = conn.identity;
      const key = id.kind === 'session' ? `s:${id.sessionId}` : `t:${id.tokenId}:${id.prefix}`;
      (byCredential.get(key) ?? byCredential.set(key, []).get(key)!).push(conn);
    }
    for (const conns of byCredential.values()) {
      const valid = await this.deps.stillValid(conns[0]!.identity).catch(() => true); // a store hiccup closes nothing
      if (!valid) for (const conn of conns) conn.close(CLOSE.revoked, 'the credential was revoked');
      else await this.recheckRoles(conns);
    }
    for (const conn of this.firehose.sockets()) {
      const still = await this.deps.operators?.admits(conn.identity).catch(() => true); // a store hiccup ends nothing
      if (!still && this.firehose.unwatch(conn))
        this.transmit(
          conn,
          JSON.stringify({
            type: 'unsubscribed',
            topics: ['firehose'],
            reason: 'This account is no longer an operator.',
          }),
        );
    }
  }

  /**
   * A membership change this node did not hear of (the bus was down, or the change crashed before
   * its notice): each board the credential's sockets watch is checked again, once per credential
   * and board, and a lost or changed role ends the subscription.
   */
  private async recheckRoles(conns: Connection[]): Promise<void> {
    const boards = new Set(conns.flatMap((conn) => [...(this.connections.get(conn)?.subs?.keys() ?? [])]));
    for (const boardId of boards) {
      const project = await this.reachable(conns[0]!, boardId).catch(() => undefined); // a store hiccup ends nothing
      if (project === undefined) continue;
      for (const conn of conns) {
        const sub = this.connections.get(conn)?.subs?.get(boardId);
        if (!sub || sub.lastSeq < 0 || project?.role === sub.role) continue; // (a subscription still starting checked its role just now)
        this.drop(
          conn,
          boardId,
          project === null
            ? 'You are no longer a member of this board.'
            : `Your role on this board is now ${project.role}; subscribe again.`,
        );
      }
    }
  }

  /** Brings every live subscription up to the log: one read per board, from its furthest-behind socket. */
  private async catchUpAll(): Promise<void> {
    for (const boardId of [...this.streams.keys()]) this.endStream(boardId);
    const behind = new Map<string, number>();
    for (const { subs } of this.connections.values()) {
      for (const [boardId, sub] of subs ?? [])
        if (!sub.held) behind.set(boardId, Math.min(behind.get(boardId) ?? Infinity, sub.lastSeq));
    }
    for (const [boardId, from] of behind) {
      try {
        for (let after = from; ;) {
          const page = await this.deps.store.events.find(
            { boardId, seq: { $gt: after } },
            { sort: [['seq', 1]], limit: REPLAY_PAGE },
          );
          // As a delivery: the stream's subscriptions (those that join it meanwhile included) have it published.
          this.publish(boardId, page);
          for (const [conn, sub] of this.watchers.get(boardId) ?? [])
            if (!sub.held && !sub.joined) this.push(conn, boardId, sub, page);
          if (page.length < REPLAY_PAGE) break;
          after = page.at(-1)!.seq;
        }
      } catch {
        for (const conn of [...(this.watchers.get(boardId)?.keys() ?? [])])
          conn.close(CLOSE.shutdown, 'the event log cannot be read');
      }
    }
  }

  /** Pushes a shout to the board's subscribers allowed to see it; reaching its addressee is its delivery. */
  private shout(boardId: string, shout: Extract<Notice, { kind: 'shout' }>['shout']): void {
    const message = Buffer.from(
      JSON.stringify({ type: 'shout', boardId, shout: { ...shout, at: new Date(shout.at).toISOString() } }),
    );
    const watchers = this.watchers.get(boardId);
    if (shout.to === null) {
      this.deps.publish(shoutsTopic(boardId), message); // the whole views'
      for (const conn of this.narrow.get(boardId) ?? []) {
        const sub = watchers?.get(conn);
        if (sub && hearsShouts(sub.topics) && seesShout(sub.view, shout)) this.transmit(conn, message);
      }
      return;
    }
    let delivered = false;
    for (const [conn, sub] of watchers ?? []) {
      if (!hearsShouts(sub.topics) || !seesShout(sub.view, shout)) continue;
      if (this.transmit(conn, message) && conn.identity.principal === shout.to) delivered = true;
    }
    if (delivered) {
      void this.deps.store.shouts
        .get(shout.id)
        .then((s) =>
          s && s.deliveredAt === null
            ? this.deps.store.shouts.update(s._id, s.version, { deliveredAt: this.deps.clock() })
            : null,
        )
        .catch(() => undefined);
    }
  }

  /**
   * Starts watching a board: from `since` through the log, then live. A repeated subscribe to a
   * board the socket already watches merges its topics into that subscription (no second replay).
   */
  private async subscribe(conn: Connection, boardId: string, topics: Set<Topic>, start: Start): Promise<void> {
    const state = this.connections.get(conn);
    if (!state) return;
    const existing = state.subs?.get(boardId);
    if (existing) {
      if (topics.has('presence') && !mayRead(existing.view, 'roster'))
        return this.error(conn, 'PROJECT_SCOPE_DENIED', ROSTER_DENIED, { boardId });
      const before = [
        ...broadcastTopics(boardId, existing),
        ...(existing.joined ? streamTopics(boardId, existing.topics) : []),
      ];
      for (const topic of topics) existing.topics.add(topic);
      const after = [
        ...broadcastTopics(boardId, existing),
        ...(existing.joined ? streamTopics(boardId, existing.topics) : []),
      ];
      for (const topic of before) if (!after.includes(topic)) conn.leave(topic);
      for (const topic of after) if (!before.includes(topic)) conn.join(topic);
      return void this.transmit(
        conn,
        JSON.stringify({
          type: 'subscribed',
          boardId,
          topics: [...existing.topics],
          seq: Math.max(this.lastSeqOf(boardId, existing), 0),
          merged: true,
        }),
      );
    }
    if ((state.subs?.size ?? 0) >= SOCKET_BUDGET.subscriptions) {
      return this.error(
        conn,
        'SUBSCRIPTION_LIMIT',
        `One socket watches at most ${SOCKET_BUDGET.subscriptions} boards; unsubscribe from one first.`,
        { boardId },
      );
    }
    const { project, probe } = await this.membership(conn, boardId, topics);
    let sub: Subscription;
    let view: BoardView;
    let name = '';
    try {
      if (!project)
        return this.error(
          conn,
          'PROJECT_SCOPE_DENIED',
          'That board does not exist or this credential cannot reach it.',
          { boardId },
        );
      // What the socket sees is decided as for REST reads: a snapshot as GET /api/items, the roster as GET /api/agents.
      view = boardViewOf(conn.identity, project.role);
      if (start.snapshot && !mayRead(view, 'items'))
        return this.error(
          conn,
          'PROJECT_SCOPE_DENIED',
          'This resource token sees none of the board’s items; subscribe without snapshot.',
          { boardId },
        );
      if (topics.has('presence') && !mayRead(view, 'roster'))
        return this.error(conn, 'PROJECT_SCOPE_DENIED', ROSTER_DENIED, { boardId });
      if (project.role === 'operator') {
        if (!this.connections.has(conn) || state.subs?.has(boardId)) return;
        const audit = {
          action: 'subscribe',
          target: `board:${boardId}`,
          projectId: boardId,
          data: { topics: [...topics], socket: conn.id },
        } as const;
        if (
          !(await this.deps.operators!.audit(conn.identity, audit).then(
            () => true,
            () => false,
          ))
        )
          return this.error(
            conn,
            'SERVICE_UNAVAILABLE',
            'The audit row of this subscription could not be written; subscribe again.',
            { boardId },
          );
      }
      if (!this.connections.has(conn) || state.subs?.has(boardId)) return; // closed, or subscribed meanwhile
      sub = { topics, role: project.role, view, whole: seesWholeBoard(view), lastSeq: -1, held: [], joined: false }; // hold live events from now on
      name = project.name;
      this.watch(conn, boardId, sub);
    } finally {
      this.endProbe(probe);
    }
    // A membership change that landed after the last read but before the watch began.
    if (probe.stale) return this.drop(conn, boardId, 'Your access to this board changed; subscribe again.');
    // An earlier subscription's replay (since unsubscribed) ends at its next page; wait for it.
    await state.replays?.get(boardId);
    const replay = this.startFrom(conn, boardId, sub, { role: project.role, name }, start);
    const replays = (state.replays ??= new Map());
    replays.set(boardId, replay);
    try {
      await replay;
    } finally {
      if (replays.get(boardId) === replay) replays.delete(boardId);
    }
  }

  /**
   * The socket's role on the board as it stands now. A token's role is read again (a lowered
   * member's tokens are narrowed while the socket stays open), and a membership change that lands
   * during the read makes it read again, so no subscribe slips in under a role just taken away.
   */
  private async membership(
    conn: Connection,
    boardId: string,
    topics: ReadonlySet<Topic>,
  ): Promise<{ project: SelectedProject | OperatorView | null; probe: Probe }> {
    let heldBack: (string | Uint8Array)[] | undefined;
    for (let reads = 1; ; reads++) {
      // The probe stays registered for the caller, which removes it once the subscription is in place.
      const probe: Probe = { conn, boardId, stale: false, topics, ...(heldBack && { heldBack }) };
      this.probes.add(probe);
      let project: SelectedProject | OperatorView | null;
      try {
        project = await this.reachable(conn, boardId);
      } catch (e) {
        this.endProbe(probe);
        throw e;
      }
      if (!probe.stale || reads >= MEMBERSHIP_READS) return { project, probe };
      this.probes.delete(probe);
      heldBack = probe.heldBack;
    }
  }

  /** The subscribe under way of `conn` to the board whose subscription will carry lease endings, if any. */
  private subscribeCarryingLeaseEnds(conn: Connection, boardId: string): Probe | undefined {
    for (const probe of this.probes)
      if (probe.conn === conn && probe.boardId === boardId && carriesLeaseEnds(probe.topics)) return probe;
    return undefined;
  }

  /** Ends a subscribe's probe; the lease endings it held back go out now unless a subscription to the board came about (refused, or the socket closed). */
  private endProbe(probe: Probe): void {
    this.probes.delete(probe);
    if (probe.heldBack && !this.watchers.get(probe.boardId)?.has(probe.conn))
      for (const message of probe.heldBack) this.transmit(probe.conn, message);
  }

  /** A token is read afresh: its role may have narrowed, and a board takeover moves it to the new owner's account. An operator's session reaches every board. */
  private async reachable(conn: Connection, boardId: string): Promise<SelectedProject | OperatorView | null> {
    const identity = conn.identity;
    if (identity.kind !== 'token')
      return (
        (await this.deps.selector.reachable(identity, boardId)) ??
        (await this.deps.operators?.board(identity, boardId)) ??
        null
      );
    const token = await this.deps.store.tokens.get(identity.tokenId);
    if (!token || token.revoked || token.prefix !== identity.prefix) return null;
    const state = this.connections.get(conn);
    if (state) state.accountId = token.accountId;
    return this.deps.selector.reachable({ ...identity, role: token.role, accountId: token.accountId }, boardId);
  }

  private async startFrom(
    conn: Connection,
    boardId: string,
    sub: Subscription,
    project: { role: string; name: string },
    start: Start,
  ): Promise<void> {
    // A snapshot's board is read before the log is synced, so the log holds every event up to its seq.
    const committed = start.snapshot ? await this.deps.readBoard(boardId) : null;
    // A snapshot costs the socket what reading the items over REST would cost in requests, within limits (protocol.ts).
    if (committed && !this.withinBudget(conn, snapshotCost(committed.board.items.size)))
      return this.overBudget(conn, 'message budget spent: a snapshot costs one message per 1,000 items');
    await this.deps.syncLog(boardId);
    const reader = sub.view;
    const shouts = hearsShouts(sub.topics);
    const snapshot = committed
      ? await snapshotMessages(this.deps.store, {
          boardId,
          name: project.name,
          committed,
          view: reader,
          shouts,
          now: this.deps.clock(),
        })
      : null;
    const head = snapshot?.seq ?? (await this.deps.store.boards.select({ _id: boardId }, ['lastSeq']))[0]?.lastSeq ?? 0;
    const oldest = snapshot
      ? 0
      : ((await this.deps.store.events.select({ boardId }, ['seq'], { sort: [['seq', 1]], limit: 1 }))[0]?.seq ??
        head + 1);
    const since = snapshot ? undefined : start.since;
    let resync = false;
    if (since === undefined || since > head) sub.lastSeq = head;
    else if (since + 1 < oldest) {
      resync = true; // the log no longer holds what was missed: reload status, then go live
      sub.lastSeq = head;
    } else sub.lastSeq = since;
    this.transmit(
      conn,
      JSON.stringify({ type: 'subscribed', boardId, topics: [...sub.topics], seq: sub.lastSeq, role: project.role }),
    );
    if (resync)
      this.transmit(
        conn,
        JSON.stringify({
          type: 'resync',
          boardId,
          seq: head,
          reason: 'Events since that seq are no longer retained; reload GET /api/status.',
        }),
      );
    for (const message of snapshot?.messages ?? []) {
      if (conn.backlog() > REPLAY_BACKLOG) await conn.drained();
      if (!this.current(conn, boardId, sub)) return;
      this.transmit(conn, message);
    }
    if (sub.topics.has('presence')) this.transmit(conn, await rosterMessage(this.deps.store, boardId));
    if (shouts && start.shoutsAfter !== undefined && !snapshot)
      for (const message of await missedShouts(this.deps.store, boardId, reader, start.shoutsAfter, this.deps.clock()))
        this.transmit(conn, message);
    await this.catchUp(conn, boardId, sub);
  }

  /** Sends from the log everything after lastSeq, at the pace the client reads, then what was held meanwhile. */
  private async catchUp(conn: Connection, boardId: string, sub: Subscription): Promise<void> {
    for (let gaps = 0; ;) {
      if (!this.current(conn, boardId, sub)) return;
      const page = await this.deps.store.events.find(
        { boardId, seq: { $gt: sub.lastSeq } },
        { sort: [['seq', 1]], limit: REPLAY_PAGE },
      );
      const contiguous = page.findIndex((e, i) => e.seq !== sub.lastSeq + 1 + i);
      for (const e of contiguous < 0 ? page : page.slice(0, contiguous)) {
        if (conn.backlog() > REPLAY_BACKLOG) await conn.drained();
        if (!this.current(conn, boardId, sub)) return;
        this.send(conn, boardId, sub, e);
      }
      if (contiguous >= 0) {
        // An event the log does not hold yet (its commit is still being copied): never skip it.
        if (++gaps > LOG_GAP_WAITS)
          return conn.close(CLOSE.shutdown, 'the event log is incomplete; reconnect with since');
        await this.deps.syncLog(boardId);
        await new Promise((r) => setTimeout(r, LOG_GAP_WAIT_MS));
        continue;
      }
      if (page.length < REPLAY_PAGE) break;
    }
    const held = inSeqOrder(sub.held ?? []);
    sub.held = null;
    this.push(conn, boardId, sub, held);
  }

  /** Whether `sub` is still the socket's subscription to the board (not closed, unsubscribed or replaced). */
  private current(conn: Connection, boardId: string, sub: Subscription): boolean {
    return this.watchers.get(boardId)?.get(conn) === sub;
  }

  /** Sends `ordered` (in seq order) after what the socket has had; a hole is filled from the log first. */
  private push(conn: Connection, boardId: string, sub: Subscription, ordered: CommittedEvent[]): void {
    for (let i = 0; i < ordered.length; i++) {
      const e = ordered[i]!;
      if (e.seq <= sub.lastSeq) continue;
      if (e.seq > sub.lastSeq + 1) {
        sub.held = ordered.slice(i); // a hole: fill it from the log first
        void this.catchUp(conn, boardId, sub).catch(() => conn.close(CLOSE.shutdown, 'the event log cannot be read'));
        return;
      }
      this.send(conn, boardId, sub, e);
    }
    this.joinStream(conn, boardId, sub);
  }

  /** Publishes the board's events to its stream's subscriptions; a hole ends the stream (each then fills it from the log, as push does). */
  private publish(boardId: string, events: CommittedEvent[]): void {
    const stream = this.streams.get(boardId);
    if (!stream) return;
    for (const e of events) {
      if (e.seq <= stream.published) continue;
      if (e.seq > stream.published + 1) return this.endStream(boardId);
      const frame = this.frame(boardId, e);
      this.deps.publish(eventTopic(boardId, topicOf(e.type)), frame);
      this.deps.publish(eventTopic(boardId, 'activity'), frame);
      stream.published = e.seq;
    }
  }

  /** A live subscription that has had every event the board's stream has published (the first to join sets that) goes on the stream. */
  private joinStream(conn: Connection, boardId: string, sub: Subscription): void {
    if (!sub.whole || sub.joined || sub.held || sub.lastSeq < 0 || !this.current(conn, boardId, sub)) return;
    const stream =
      this.streams.get(boardId) ?? this.streams.set(boardId, { published: sub.lastSeq, joined: 0 }).get(boardId)!;
    if (stream.published !== sub.lastSeq) return;
    sub.joined = true;
    stream.joined++;
    for (const topic of streamTopics(boardId, sub.topics)) conn.join(topic);
  }

  /** Takes a subscription off the board's stream: from here on it is sent event by event, from where the stream was. */
  private leaveStream(conn: Connection, boardId: string, sub: Subscription): void {
    if (!sub.joined) return;
    const stream = this.streams.get(boardId)!;
    sub.joined = false;
    sub.lastSeq = stream.published;
    for (const topic of streamTopics(boardId, sub.topics)) conn.leave(topic);
    if (--stream.joined === 0) this.streams.delete(boardId);
  }

  /** Every subscription of the board leaves its stream (a hole in what the bus brought, or the bus was down). */
  private endStream(boardId: string): void {
    for (const [conn, sub] of this.watchers.get(boardId) ?? []) this.leaveStream(conn, boardId, sub);
    this.streams.delete(boardId);
  }

  /** The last seq a subscription has had. */
  private lastSeqOf(boardId: string, sub: Subscription): number {
    return sub.joined ? this.streams.get(boardId)!.published : sub.lastSeq;
  }

  private send(conn: Connection, boardId: string, sub: Subscription, e: CommittedEvent): void {
    sub.lastSeq = e.seq;
    if (!sub.topics.has('activity') && !sub.topics.has(topicOf(e.type))) return;
    const seen = sub.whole ? e : eventAsSeen(sub.view, e);
    if (seen) this.transmit(conn, seen === e ? this.frame(boardId, e) : eventFrame(boardId, seen));
  }

  /** Sends one message; one dropped for backpressure ends the connection, so a client never misses a message unknowingly. */
  private transmit(conn: Connection, message: string | Uint8Array): boolean {
    const sent = conn.send(message);
    if (!sent) conn.close(CLOSE.slowConsumer, SLOW_CONSUMER_REASON);
    return sent;
  }

  /** An event's message, serialized and encoded once however many sockets it goes to. */
  private frame(boardId: string, e: CommittedEvent): Uint8Array {
    let bytes = this.frames.get(e);
    if (bytes === undefined) this.frames.set(e, (bytes = eventFrame(boardId, e)));
    return bytes;
  }

  private error(conn: Connection, code: ErrorCode, message: string, details?: Record<string, unknown>): void {
    const record = errorRecord(code, this.deps.publicUrl, this.deps.observer.resolution(code));
    this.transmit(
      conn,
      JSON.stringify({ type: 'error', ...errorEnvelope(record, message, `ws-${conn.id}-${++this.errors}`, details) }),
    );
  }
}

/** Where a subscription starts: after `since`, or from a snapshot of the board; shouts after `shoutsAfter` first. */
interface Start {
  since?: number;
  snapshot: boolean;
  shoutsAfter?: string;
}

const ROSTER_DENIED =
  'This resource token does not cover the board’s roster (the status group); subscribe without presence.';

const eventFrame = (boardId: string, e: CommittedEvent): Uint8Array =>
  Buffer.from(
    JSON.stringify({
      type: 'event',
      boardId,
      seq: e.seq,
      event: { type: e.type, actor: e.actor, workId: e.workId, at: new Date(e.at).toISOString(), data: e.data },
    }),
  );

const inSeqOrder = (events: CommittedEvent[]): CommittedEvent[] =>
  events.every((e, i) => i === 0 || events[i - 1]!.seq < e.seq) ? events : [...events].sort((a, b) => a.seq - b.seq);
