// The sockets of this node and the boards each watches, indexed three ways: by socket (its
// subscriptions and budget), by board (a board's event touches only its own watchers, the narrower
// views apart), and by principal (what goes to one holder whatever it watches).
import type { CommittedEvent } from '../../actors/board-actor.js';
import type { Reader } from '../board/feed/look.js';
import type { BudgetWindow } from './budget.js';
import { transmit, type Connection } from './connection.js';
import { SOCKET_BUDGET, type Topic } from './protocol.js';
import { broadcastTopics, carriesLeaseEnds } from './topics.js';

/** How many boards a socket stopped watching are remembered for their lease ends (`ended`): as many as it may watch. */
const ENDED_KEPT = SOCKET_BUDGET.subscriptions;

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
  /**
   * Lease ends at or before this seq are not this subscription's to send: it started after them,
   * or carried none when they came (topics merged in later). Unset: none before its start.
   */
  leaseEndsAfter?: number;
  /**
   * Its holder's lease ends the notice left to this subscription, not sent by it yet
   * (lease-news.ts): sent at its start if it starts after them, and when it ends if it never sent
   * them.
   */
  owedEnds?: OwedEnd[];
  /**
   * The seq of the board whose leases its view holds (visibility.ts heldAt): the events up to it,
   * a replay's, leave `held` as it is; those after move it (followLease). Unset: every event does.
   */
  followsAfter?: number;
  /** Live events held while the log is being read; null when live. */
  held: CommittedEvent[] | null;
  /** About the bytes of `held`'s frames, counted as events are held (delivery.ts bounds them). */
  heldBytes?: number;
  /**
   * A catch-up came while the log was being read: what it was for may have been committed after
   * the replay's last page, so the log is read again before the subscription goes live.
   */
  readAgain?: boolean;
  /** On the board's event stream (board-stream.ts), not sent one by one. */
  joined: boolean;
}

/** A subscribe being let in: an unsubscribe meanwhile cancels it; a repeated one waits for it to be `done`. */
export interface PendingSubscribe {
  cancelled: boolean;
  done: Promise<void>;
}

/** A lease end as its holder's socket is told of it. */
export interface OwedEnd {
  seq: number;
  frame: string | Uint8Array;
}

/** What lease-news needs of a subscription that ended: what it carried and how far it went. */
export type EndedSubscription = Reader & Pick<Subscription, 'topics' | 'lastSeq' | 'leaseEndsAfter'>;

/** A socket's subscriptions and what it has spent of its budget. */
export interface SocketState extends BudgetWindow {
  /** The boards it watches; made on the first subscribe. */
  subs: Map<string, Subscription> | null;
  /** The replay running per board (at most one per socket and board). */
  replays: Map<string, Promise<void>> | null;
  /** The subscribe being let in per board, until it watches or is refused (subscribe.ts). */
  pending: Map<string, PendingSubscribe> | null;
  /** The account the credential acts for now: a token moves with a board takeover. */
  accountId: string;
  /** When the socket opened. */
  openedAt: number;
}

export class Subscriptions {
  /**
   * Each open socket's state, made when it is first asked for (its first message): until then the
   * entry holds only when the socket opened, as ms after `epoch` (a small integer, no object).
   */
  private readonly sockets = new Map<Connection, SocketState | number>();
  private epoch: number | null = null;
  private readonly boards = new Map<string, Map<Connection, Subscription>>();
  /**
   * Each principal's sockets, as an array (a set of 20 costs twice the heap). One is taken out by
   * replacing the array, so a reader going through it as a socket closes sees it whole.
   */
  private readonly principals = new Map<string, Connection[]>();
  /** The subscriptions of narrower views by board: their broadcast shouts are sent one by one. */
  private readonly narrow = new Map<string, Set<Connection>>();
  /**
   * Per socket, its last subscription to each board it unsubscribed from that carried lease ends
   * (the newest ENDED_KEPT), as it ended. A lease's end also comes as a notice after its batch
   * (lease-news.ts): one that batch brought to the subscription was already sent.
   */
  private readonly ended = new WeakMap<Connection, Map<string, EndedSubscription>>();

  /** `leaveStream` takes a subscription off its board's stream (board-stream.ts) when it ends. */
  constructor(private readonly leaveStream: (conn: Connection, boardId: string, sub: Subscription) => void) {}

  open(conn: Connection, now: number): void {
    this.epoch ??= now;
    this.sockets.set(conn, small(now - this.epoch));
    const principal = conn.identity.principal;
    const same = this.principals.get(principal);
    if (same) same.push(conn);
    else this.principals.set(principal, [conn]);
  }

  close(conn: Connection): void {
    for (const boardId of this.subsOf(conn)?.keys() ?? []) this.end(conn, boardId, false);
    this.sockets.delete(conn);
    this.ended.delete(conn);
    const principal = conn.identity.principal;
    const same = this.principals.get(principal);
    if (same?.includes(conn)) {
      if (same.length === 1) this.principals.delete(principal);
      else
        this.principals.set(
          principal,
          same.filter((c) => c !== conn),
        );
    }
  }

  get size(): number {
    return this.sockets.size;
  }

  /** The socket's state (made now if it was not yet: its budget's window starts when it opened); none once it closed. */
  state(conn: Connection): SocketState | undefined {
    const held = this.sockets.get(conn);
    if (typeof held !== 'number') return held;
    const openedAt = this.epoch! + held;
    const state: SocketState = {
      subs: null,
      windowStart: openedAt,
      used: 0,
      replays: null,
      pending: null,
      accountId: conn.identity.accountId,
      openedAt,
    };
    this.sockets.set(conn, state);
    return state;
  }

  /** When the socket opened; undefined once it closed. */
  openedAt(conn: Connection): number | undefined {
    const held = this.sockets.get(conn);
    return typeof held === 'number' ? this.epoch! + held : held?.openedAt;
  }

  /** Whether the socket is open (not closed). */
  isOpen(conn: Connection): boolean {
    return this.sockets.has(conn);
  }

  /** The boards the socket watches, without making its state. */
  subsOf(conn: Connection): Map<string, Subscription> | null | undefined {
    const held = this.sockets.get(conn);
    return typeof held === 'number' ? null : held?.subs;
  }

  connections(): IterableIterator<Connection> {
    return this.sockets.keys();
  }

  /** The states made so far (a socket that never sent a message has none, and watches nothing). */
  *states(): IterableIterator<SocketState> {
    for (const held of this.sockets.values()) if (typeof held !== 'number') yield held;
  }

  watch(conn: Connection, boardId: string, sub: Subscription): void {
    const state = this.state(conn);
    if (state) (state.subs ??= new Map()).set(boardId, sub);
    (this.boards.get(boardId) ?? this.boards.set(boardId, new Map()).get(boardId)!).set(conn, sub);
    if (!sub.whole) (this.narrow.get(boardId) ?? this.narrow.set(boardId, new Set()).get(boardId)!).add(conn);
    for (const topic of broadcastTopics(boardId, sub)) conn.join(topic);
  }

  /** Ends a socket's subscription to a board; false when there was none. */
  unwatch(conn: Connection, boardId: string): boolean {
    return this.end(conn, boardId, true);
  }

  /** Ends the subscription; the lease ends it owed go out now, unless the socket is closing (`open`). */
  private end(conn: Connection, boardId: string, open: boolean): boolean {
    const board = this.boards.get(boardId);
    const sub = board?.get(conn);
    if (sub) {
      for (const topic of broadcastTopics(boardId, sub)) conn.leave(topic);
      this.leaveStream(conn, boardId, sub); // its lastSeq is now what the stream had sent it
      const narrow = this.narrow.get(boardId);
      if (narrow?.delete(conn) && narrow.size === 0) this.narrow.delete(boardId);
      if (open) for (const owed of sub.owedEnds ?? []) if (owed.seq > sub.lastSeq) transmit(conn, owed.frame);
      if (carriesLeaseEnds(sub.topics) && sub.lastSeq > 0) this.keepEnded(conn, boardId, sub);
    }
    if (board?.delete(conn) && board.size === 0) this.boards.delete(boardId);
    return this.subsOf(conn)?.delete(boardId) ?? false;
  }

  /** The socket's last subscription to the board that carried lease ends, as it was when the socket unsubscribed (lately). */
  endedSubscription(conn: Connection, boardId: string): EndedSubscription | undefined {
    return this.ended.get(conn)?.get(boardId);
  }

  private keepEnded(conn: Connection, boardId: string, sub: Subscription): void {
    let ended = this.ended.get(conn);
    if (!ended) this.ended.set(conn, (ended = new Map()));
    ended.delete(boardId); // set again as the newest
    const { view, whole, topics, lastSeq, leaseEndsAfter } = sub; // not what it held
    ended.set(boardId, { view, whole, topics, lastSeq, leaseEndsAfter });
    if (ended.size > ENDED_KEPT) ended.delete(ended.keys().next().value!);
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
  of(principal: string): readonly Connection[] | undefined {
    return this.principals.get(principal);
  }

  /** Whether `sub` is still the socket's subscription to the board (not closed, unsubscribed or replaced). */
  current(conn: Connection, boardId: string, sub: Subscription): boolean {
    return this.boards.get(boardId)?.get(conn) === sub;
  }

  accountOf(conn: Connection): string {
    const held = this.sockets.get(conn);
    return (typeof held === 'number' ? undefined : held?.accountId) ?? conn.identity.accountId;
  }
}

/**
 * `n` as a small integer where it is one: a difference of two large numbers (times in ms) comes out
 * of V8's interpreter as a heap number of its own (16 bytes), even when it is a small integer.
 */
export const small = (n: number): number => ((n | 0) === n ? n | 0 : n);
