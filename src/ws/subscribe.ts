// A socket's subscribe to a board: let in as REST reads are (the feed's lookAt), audited when an
// operator watches, then started from the log (`since`) or from a snapshot of the board and brought
// live. A repeated subscribe to a board the socket watches merges its topics into that subscription.
// The snapshot's events and the roster name their agents and people as the reader may see them.
import { heldBy } from '../../machines/board-queries.js';
import type { Committed } from '../../actors/board-actor.js';
import type { Store } from '../../store/ports/store.js';
import type { BoardFeed, StartPoint } from '../board/feed/feed.js';
import { lookHolding, readsHeld, refusedRead, seesAddresses } from '../board/feed/look.js';
import { heldAt, type BoardRead } from '../board/visibility.js';
import { drop, NO_LONGER_OPERATOR, roleChanged } from './access-changes.js';
import type { AccessChecks, Probe } from './access-checks.js';
import type { Role } from '../auth/identity.js';
import { BOARD_CLOSED_MESSAGE } from '../auth/project-selection.js';
import type { BoardStreams } from './board-stream.js';
import { rosterMessage, shoutMessage, snapshotMessages } from './board-view.js';
import { SNAPSHOT_SPENT, type SocketBudgets } from './budget.js';
import { transmit, type Connection } from './connection.js';
import { REPLAY_BACKLOG, type Delivery } from './delivery.js';
import type { Names } from './names.js';
import type { OperatorAccess } from './operator-access.js';
import { SNAPSHOT, snapshotCost, SOCKET_BUDGET, type Topic } from './protocol.js';
import type { SocketErrors } from './socket-errors.js';
import type { PendingSubscribe, SocketState, Subscription, Subscriptions } from './subscriptions.js';
import { broadcastTopics, carriesLeaseEnds, hearsShouts, readsOf, streamTopics } from './topics.js';
import { startedAfter } from './lease-news.js';

/** The items whose lease `principal` holds on the committed board. */
export const heldIn = (committed: Committed, principal: string): string[] =>
  heldBy(committed.board, principal).map((item) => item.workId);

/** Where a subscription starts: after `since`, or from a snapshot of the board; shouts after `shoutsAfter` first. */
export interface Start {
  since?: number;
  snapshot: boolean;
  shoutsAfter?: string;
}

export interface SubscribeDeps {
  /** Receives other nodes' commits to the board from now on; resolves once it does (hub.ts). */
  hear(boardId: string): Promise<void>;
  feed: Pick<BoardFeed, 'board' | 'snapshot' | 'startAfter' | 'shoutsAfter'>;
  store: Pick<Store, 'presence'>;
  names: Pick<Names, 'named'>;
  subscriptions: Pick<Subscriptions, 'state' | 'isOpen' | 'watch' | 'unwatch' | 'current'>;
  streams: Pick<BoardStreams, 'lastSeqOf'>;
  access: Pick<AccessChecks, 'membership' | 'endProbe' | 'closed' | 'reachable'>;
  delivery: Pick<Delivery, 'catchUp'>;
  budgets: Pick<SocketBudgets, 'charge'>;
  errors: Pick<SocketErrors, 'send'>;
  /** Present when operators' sockets may watch any board. */
  operators?: Pick<OperatorAccess, 'audit' | 'admits'>;
}

/** A subscription let in: watching (its live events held) until it has started. */
interface Admitted {
  sub: Subscription;
  project: { role: Role | 'operator'; name: string };
  probe: Probe;
}

const UNREACHABLE = 'That board does not exist or this credential cannot reach it.';
/** Why a read the subscribe amounts to (readsOf) is refused. */
const DENIED: Record<BoardRead, string> = {
  log: 'This resource token does not cover the board’s event log (as GET /api/activity); subscribe to shouts or presence alone.',
  items: 'This resource token sees none of the board’s items; subscribe without snapshot.',
  roster: 'This resource token does not cover the board’s roster (the status group); subscribe without presence.',
  shouts: 'This resource token does not cover the board’s shouts.',
  doctrine:
    'This resource token covers neither the board’s doctrine nor its spec (the doctrine topic carries their events).',
};

export class Subscribe {
  constructor(private readonly deps: SubscribeDeps) {}

  /**
   * Starts watching a board: from `since` through the log, then live. A repeated subscribe to a
   * board the socket already watches merges its topics into that subscription (no second replay);
   * one sent while the first is still being let in waits for it, then merges (or starts, if the
   * first was refused). Subscribes being let in count towards the socket's boards.
   */
  async subscribe(conn: Connection, boardId: string, topics: Set<Topic>, start: Start): Promise<void> {
    const state = this.deps.subscriptions.state(conn);
    if (!state) return;
    const earlier = state.pending?.get(boardId);
    if (earlier) {
      await earlier.done;
      // An unsubscribe sent after both ended this one too.
      return earlier.cancelled ? undefined : this.subscribe(conn, boardId, topics, start);
    }
    const existing = state.subs?.get(boardId);
    if (existing) return this.merge(conn, boardId, existing, topics);
    if ((state.subs?.size ?? 0) + (state.pending?.size ?? 0) >= SOCKET_BUDGET.subscriptions) {
      return this.deps.errors.send(
        conn,
        'SUBSCRIPTION_LIMIT',
        `One socket watches at most ${SOCKET_BUDGET.subscriptions} boards; unsubscribe from one first.`,
        { boardId },
      );
    }
    let letIn!: () => void;
    const pending: PendingSubscribe = { cancelled: false, done: new Promise((resolve) => (letIn = resolve)) };
    (state.pending ??= new Map()).set(boardId, pending);
    // Those waiting for it go on once it has told the socket `subscribed`, or ended without.
    try {
      await this.watch(conn, state, boardId, topics, start, pending, letIn);
    } finally {
      letIn();
    }
  }

  /** Lets a subscribe in and, once in, starts it (`told` once it has sent `subscribed`). */
  private async watch(
    conn: Connection,
    state: SocketState,
    boardId: string,
    topics: Set<Topic>,
    start: Start,
    pending: PendingSubscribe,
    told: () => void,
  ): Promise<void> {
    let admitted: Admitted | null;
    try {
      admitted = await this.admit(conn, state, boardId, topics, start, pending);
    } finally {
      if (state.pending!.get(boardId) === pending) state.pending!.delete(boardId);
    }
    if (!admitted) return;
    const { sub, project, probe } = admitted;
    // A membership change that landed after the last read but before the watch began.
    if (probe.stale)
      return drop(this.deps.subscriptions, conn, boardId, 'Your access to this board changed; subscribe again.');
    // Other nodes' commits to the board are held from now on; the log is read after, so nothing falls between.
    await this.deps.hear(boardId);
    if (!this.deps.subscriptions.current(conn, boardId, sub)) return; // closed, unsubscribed or replaced meanwhile
    // An earlier subscription's replay (since unsubscribed) ends at its next page; wait for it.
    await state.replays?.get(boardId);
    const replay = this.startFrom(conn, boardId, sub, project, start, told);
    const replays = (state.replays ??= new Map());
    replays.set(boardId, replay);
    try {
      await replay;
    } finally {
      if (replays.get(boardId) === replay) replays.delete(boardId);
    }
  }

  /**
   * An unsubscribe: the subscribe to the board still being let in, if any, is cancelled (it will
   * not watch, and tells nothing more: the unsubscribe is answered), with the repeated ones waiting
   * for it; it no longer holds the board, so a subscribe sent after the unsubscribe starts afresh.
   */
  cancel(conn: Connection, boardId: string): void {
    const state = this.deps.subscriptions.state(conn);
    const pending = state?.pending?.get(boardId);
    if (!pending) return;
    pending.cancelled = true;
    state!.pending!.delete(boardId);
  }

  /**
   * Merges `topics` into the socket's subscription to the board: it joins and leaves the engine's
   * topics that changes. The credential and the role are read again first, as a first subscribe
   * reads them: one that ended since closes the socket (AccessChecks.current), and a role lost or
   * changed unheard ends the subscription as revalidation would, rather than widening it; the
   * leases its holder holds as a first subscribe reads them, when its reads come to take them in.
   */
  private async merge(
    conn: Connection,
    boardId: string,
    existing: Subscription,
    topics: ReadonlySet<Topic>,
  ): Promise<void> {
    const reach = await this.deps.access.reachable(conn, boardId, true);
    if (!this.deps.subscriptions.current(conn, boardId, existing)) return; // closed, unsubscribed or replaced meanwhile
    if (reach?.role !== existing.role)
      return drop(this.deps.subscriptions, conn, boardId, roleChanged(reach?.role ?? null));
    // Widened to read what takes in the items it holds (readsHeld), which its topics did not: they are
    // read now from the board, as a first subscribe reads them, and followed from there.
    const reads = readsOf(topics, false);
    if (readsHeld(existing.view, reads) && !readsHeld(existing.view, readsOf(existing.topics, false))) {
      const committed = await this.deps.feed.board(boardId);
      if (!this.deps.subscriptions.current(conn, boardId, existing)) return;
      heldAt(existing.view, heldIn(committed, conn.identity.principal));
    }
    const refused = refusedRead(existing.view, reads);
    if (refused) return this.deps.errors.send(conn, 'PROJECT_SCOPE_DENIED', DENIED[refused], { boardId });
    const joined = () => [
      ...broadcastTopics(boardId, existing),
      ...(existing.joined ? streamTopics(boardId, existing.topics) : []),
    ];
    const before = joined();
    const carried = carriesLeaseEnds(existing.topics);
    for (const topic of topics) existing.topics.add(topic);
    if (!carried && carriesLeaseEnds(existing.topics))
      existing.leaseEndsAfter = this.deps.streams.lastSeqOf(boardId, existing); // lease-news.ts
    const after = joined();
    for (const topic of before) if (!after.includes(topic)) conn.leave(topic);
    for (const topic of after) if (!before.includes(topic)) conn.join(topic);
    const seq = Math.max(this.deps.streams.lastSeqOf(boardId, existing), 0);
    transmit(conn, JSON.stringify({ type: 'subscribed', boardId, topics: [...existing.topics], seq, merged: true }));
  }

  /**
   * The socket's subscription to the board, watching from now on, once its role there as it stands
   * and its view let it in; null when refused (the socket is told why), or when the socket closed,
   * subscribed to the board or unsubscribed from it meanwhile.
   */
  private async admit(
    conn: Connection,
    state: SocketState,
    boardId: string,
    topics: Set<Topic>,
    start: Start,
    pending: PendingSubscribe,
  ): Promise<Admitted | null> {
    const { errors, subscriptions } = this.deps;
    const { project, probe } = await this.deps.access.membership(conn, boardId, topics);
    const gone = () => !subscriptions.isOpen(conn) || state.subs?.has(boardId) || pending.cancelled;
    try {
      if (gone()) return null; // closed, subscribed or unsubscribed meanwhile: nothing to tell
      if (!project) {
        if (await this.deps.access.closed(conn, boardId))
          errors.send(conn, 'BOARD_CLOSED', BOARD_CLOSED_MESSAGE, { boardId });
        else errors.send(conn, 'PROJECT_SCOPE_DENIED', UNREACHABLE, { boardId });
        return null;
      }
      // What the socket sees is decided as for REST reads: events as GET /api/activity, a snapshot as GET /api/items, the roster as GET /api/agents.
      // The items whose lease it holds are its to read while it holds them: read here to let it in,
      // and again as of its start (startFrom), which the subscription then follows (delivery.ts).
      const held = async () => heldIn(await this.deps.feed.board(boardId), conn.identity.principal);
      const reader = await lookHolding(conn.identity, project.role, readsOf(topics, start.snapshot), held);
      if (gone()) return null;
      if (reader.refused) {
        errors.send(conn, 'PROJECT_SCOPE_DENIED', DENIED[reader.refused], { boardId });
        return null;
      }
      if (project.role === 'operator' && !(await this.audited(conn, boardId, topics))) return null;
      if (gone()) return null;
      const { view, whole } = reader;
      // Live events are held from now on, until the subscription has started.
      const sub: Subscription = { topics, role: project.role, view, whole, lastSeq: -1, held: [], joined: false };
      subscriptions.watch(conn, boardId, sub);
      return { sub, project: { role: project.role, name: project.name }, probe };
    } finally {
      this.deps.access.endProbe(probe);
    }
  }

  /** An operator's watch of a board writes its audit row before anything flows; false when it cannot (the socket is told) or need not be. */
  private async audited(conn: Connection, boardId: string, topics: Set<Topic>): Promise<boolean> {
    const audit = {
      action: 'subscribe',
      target: `board:${boardId}`,
      projectId: boardId,
      data: { topics: [...topics], socket: conn.id },
    } as const;
    const written = await this.deps.operators!.audit(conn.identity, audit).then(
      () => true,
      () => false,
    );
    if (!written) {
      const message = 'The audit row of this subscription could not be written; subscribe again.';
      this.deps.errors.send(conn, 'SERVICE_UNAVAILABLE', message, { boardId });
    }
    return written;
  }

  /** Tells the socket where its subscription starts, sends the snapshot or the missed shouts, then brings it live from the log. */
  private async startFrom(
    conn: Connection,
    boardId: string,
    sub: Subscription,
    project: { role: Role | 'operator'; name: string },
    start: Start,
    told: () => void,
  ): Promise<void> {
    const { feed } = this.deps;
    const { principal } = conn.identity;
    const committed = start.snapshot ? await feed.board(boardId) : null;
    // A snapshot costs the socket what reading the items over REST would cost in requests, within limits (protocol.ts).
    if (committed && !this.deps.budgets.charge(conn, snapshotCost(committed.board.items.size), SNAPSHOT_SPENT)) return;
    // Its view holds the leases of the board it starts at (visibility.ts heldAt): the snapshot's, or
    // the one read for it, whose seq is its head (startAfter).
    const holding = readsHeld(sub.view, readsOf(sub.topics, start.snapshot))
      ? (committed ?? (await feed.board(boardId)))
      : null;
    if (holding) heldAt(sub.view, heldIn(holding, principal));
    const shouts = hearsShouts(sub.topics);
    const snapshot = committed
      ? await feed.snapshot(boardId, committed, sub, { recent: SNAPSHOT.recent, shouts })
      : null;
    const addresses = seesAddresses(project.role);
    const named = (principals: Iterable<string>) => this.deps.names.named(principals, addresses);
    const names = snapshot ? await named(snapshot.recent.map((e) => e.actor)) : undefined;
    const at: StartPoint = snapshot
      ? { seq: snapshot.seq, head: snapshot.seq, resync: false }
      : await feed.startAfter(boardId, start.since, holding ?? undefined);
    sub.followsAfter = at.head;
    sub.lastSeq = at.seq;
    // Started: from here an account change heard rechecks it as any subscription (AccessChanges); one
    // heard while it was let in passed it by, so an operator's standing is asked again now.
    if (project.role === 'operator' && !(await this.deps.operators!.admits(conn.identity).catch(() => true)))
      return drop(this.deps.subscriptions, conn, boardId, NO_LONGER_OPERATOR);
    if (!this.deps.subscriptions.current(conn, boardId, sub)) return;
    const subscribed = { type: 'subscribed', boardId, topics: [...sub.topics], seq: sub.lastSeq, role: project.role };
    transmit(conn, JSON.stringify(subscribed));
    told();
    startedAfter(conn, sub, at.seq); // its holder's lease ends up to here are not its to send
    if (at.resync) {
      const reason = 'Events since that seq are no longer retained; reload GET /api/status.';
      transmit(conn, JSON.stringify({ type: 'resync', boardId, seq: at.head, reason }));
    }
    const pages = snapshot ? snapshotMessages(boardId, project.name, snapshot, shouts, names) : [];
    if (!(await this.paced(conn, boardId, sub, pages))) return;
    if (sub.topics.has('presence')) {
      // A narrower view is told an agent's note by the items that agent holds (agentAsSeen): the board's.
      const board = sub.view.items === null ? null : (holding ?? (await feed.board(boardId)));
      const holds = (agent: string) => (board ? heldIn(board, agent) : []);
      transmit(conn, await rosterMessage(this.deps.store, boardId, sub.view, named, holds));
    }
    if (shouts && start.shoutsAfter !== undefined && !snapshot) {
      const missed = await feed.shoutsAfter(boardId, sub, start.shoutsAfter);
      if (
        !(await this.paced(
          conn,
          boardId,
          sub,
          missed.map((shout) => shoutMessage(boardId, shout)),
        ))
      )
        return;
    }
    await this.deps.delivery.catchUp(conn, boardId, sub);
  }

  /**
   * Sends `messages` at the pace the client reads, as a replay of the log goes: up to 500 missed
   * shouts or a large board's pages sent in one turn would pass the socket's backlog cap and close
   * a client that reads (4008). False once the subscription ended meanwhile.
   */
  private async paced(
    conn: Connection,
    boardId: string,
    sub: Subscription,
    messages: Iterable<string>,
  ): Promise<boolean> {
    for (const message of messages) {
      if (conn.backlog() > REPLAY_BACKLOG) await conn.drained();
      if (!this.deps.subscriptions.current(conn, boardId, sub)) return false;
      transmit(conn, message);
    }
    return true;
  }
}
