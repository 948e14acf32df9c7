// The sockets of this node and the boards each watches, indexed three ways: by socket (its
// subscriptions and budget), by board (a board's event touches only its own watchers, the narrower
// views apart), and by principal (what goes to one holder whatever it watches).
import type { CommittedEvent } from '../../actors/board-actor.js';
import type { Reader } from '../board/feed/look.js';
import type { BudgetWindow } from './budget.js';
import type { Connection } from './connection.js';
import type { Topic } from './protocol.js';
import { broadcastTopics } from './topics.js';

/**
 * One socket's watch of one board. As a Reader, what the socket may see of the board, as REST
 * reads do: a whole view's events and broadcast shouts go out as publishes; else each is sent as
 * the view sees it.
 */
export interface Subscription extends Reader {
  topics: Set<Topic>;
  /** The socket's role on the board when it subscribed; a later change ends the subscription. */
  role: string;
  /** The last seq sent (or skipped by topic); -1 until the start point is known. While joined, the board stream's instead. */
  lastSeq: number;
  /** Live events held while the log is being read; null when live. */
  held: CommittedEvent[] | null;
  /** On the board's event stream (board-stream.ts), not sent one by one. */
  joined: boolean;
}

/** A socket's subscriptions and what it has spent of its budget. */
export interface SocketState extends BudgetWindow {
  /** The boards it watches; made on the first subscribe. */
  subs: Map<string, Subscription> | null;
  /** The replay running per board (at most one per socket and board). */
  replays: Map<string, Promise<void>> | null;
  /** The account the credential acts for now: a token moves with a board takeover. */
  accountId: string;
}

export class Subscriptions {
  private readonly sockets = new Map<Connection, SocketState>();
  private readonly boards = new Map<string, Map<Connection, Subscription>>();
  private readonly principals = new Map<string, Set<Connection>>();
  /** The subscriptions of narrower views by board: their broadcast shouts are sent one by one. */
  private readonly narrow = new Map<string, Set<Connection>>();

  /** `leaveStream` takes a subscription off its board's stream (board-stream.ts) when it ends. */
  constructor(private readonly leaveStream: (conn: Connection, boardId: string, sub: Subscription) => void) {}

  open(conn: Connection, now: number): void {
    // subs and replays: made on the first subscribe (an idle socket holds less)
    this.sockets.set(conn, {
      subs: null,
      windowStart: now,
      used: 0,
      replays: null,
      accountId: conn.identity.accountId,
    });
    const principal = conn.identity.principal;
    (this.principals.get(principal) ?? this.principals.set(principal, new Set()).get(principal)!).add(conn);
  }

  close(conn: Connection): void {
    for (const boardId of this.sockets.get(conn)?.subs?.keys() ?? []) this.unwatch(conn, boardId);
    this.sockets.delete(conn);
    const same = this.principals.get(conn.identity.principal);
    if (same?.delete(conn) && same.size === 0) this.principals.delete(conn.identity.principal);
  }

  get size(): number {
    return this.sockets.size;
  }

  state(conn: Connection): SocketState | undefined {
    return this.sockets.get(conn);
  }

  connections(): IterableIterator<Connection> {
    return this.sockets.keys();
  }

  states(): IterableIterator<SocketState> {
    return this.sockets.values();
  }

  watch(conn: Connection, boardId: string, sub: Subscription): void {
    const state = this.sockets.get(conn);
    if (state) (state.subs ??= new Map()).set(boardId, sub);
    (this.boards.get(boardId) ?? this.boards.set(boardId, new Map()).get(boardId)!).set(conn, sub);
    if (!sub.whole) (this.narrow.get(boardId) ?? this.narrow.set(boardId, new Set()).get(boardId)!).add(conn);
    for (const topic of broadcastTopics(boardId, sub)) conn.join(topic);
  }

  /** Ends a socket's subscription to a board; false when there was none. */
  unwatch(conn: Connection, boardId: string): boolean {
    const board = this.boards.get(boardId);
    const sub = board?.get(conn);
    if (sub) {
      for (const topic of broadcastTopics(boardId, sub)) conn.leave(topic);
      this.leaveStream(conn, boardId, sub);
      const narrow = this.narrow.get(boardId);
      if (narrow?.delete(conn) && narrow.size === 0) this.narrow.delete(boardId);
    }
    if (board?.delete(conn) && board.size === 0) this.boards.delete(boardId);
    return this.sockets.get(conn)?.subs?.delete(boardId) ?? false;
  }

  /** A board's watchers and their subscriptions. */
  watchersOf(boardId: string): ReadonlyMap<Connection, Subscription> | undefined {
    return this.boards.get(boardId);
  }

  /** A board's watchers whose view is narrower than the whole board. */
  narrowOf(boardId: string): ReadonlySet<Connection> | undefined {
    return this.narrow.get(boardId);
  }

  /** The sockets of a principal. */
  of(principal: string): ReadonlySet<Connection> | undefined {
    return this.principals.get(principal);
  }

  /** Whether `sub` is still the socket's subscription to the board (not closed, unsubscribed or replaced). */
  current(conn: Connection, boardId: string, sub: Subscription): boolean {
    return this.boards.get(boardId)?.get(conn) === sub;
  }

  accountOf(conn: Connection): string {
    return this.sockets.get(conn)?.accountId ?? conn.identity.accountId;
  }
}
