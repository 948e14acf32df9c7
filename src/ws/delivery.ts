// A board's events to its subscriptions that are not on its stream, one send at a time: each event
// once and in seq order. Events older than what was sent are dropped; a hole (a lost bus message) is
// filled from the board's feed before anything after it goes out; a caught-up subscription of a
// whole view then goes on the board's stream (board-stream.ts). A catch-up (the bus may have lost
// some of a board's commits) reads the log to the live subscriptions, and has those still reading
// it read it again when done.
import type { CommittedEvent } from '../../actors/board-actor.js';
import type { BoardFeed } from '../board/feed/feed.js';
import { eventFor } from '../board/feed/look.js';
import { followLease } from '../board/visibility.js';
import type { BoardStreams } from './board-stream.js';
import { transmit, type Connection } from './connection.js';
import { inSeqOrder, type EventFrames } from './frames.js';
import { CLOSE, SLOW_CONSUMER, SLOW_CONSUMER_REASON, topicOf } from './protocol.js';
import type { Subscription, Subscriptions } from './subscriptions.js';

/** A replay waits for the client to read once this much is waiting to go out (well under SLOW_CONSUMER.bytes). */
export const REPLAY_BACKLOG = 256 * 1024;

export interface DeliveryDeps {
  feed: Pick<BoardFeed, 'replay' | 'pagesAfter'>;
  subscriptions: Pick<Subscriptions, 'current' | 'watchersOf' | 'states'>;
  streams: Pick<BoardStreams, 'join' | 'publish' | 'end' | 'endAll'>;
  frames: EventFrames;
}

export class Delivery {
  constructor(private readonly deps: DeliveryDeps) {}

  /** A committed batch (in seq order) to the board's subscriptions off its stream: held while one reads the log, else pushed. */
  live(boardId: string, events: CommittedEvent[]): void {
    for (const [conn, sub] of this.deps.subscriptions.watchersOf(boardId) ?? []) {
      if (sub.joined) continue;
      if (sub.held) this.hold(conn, boardId, sub, events);
      else this.push(conn, boardId, sub, events);
    }
  }

  /**
   * Holds live events while the subscription reads the log. Past what the replay has sent, they
   * are what the socket is due at once when it ends: more than a backlog's worth (SLOW_CONSUMER)
   * means the client stopped reading, so it is closed as a slow consumer, not held for without end.
   */
  private hold(conn: Connection, boardId: string, sub: Subscription, events: CommittedEvent[]): void {
    // What the socket would be sent of them: its topics' events as its view sees them (the whole
    // frame's size for one it sees narrowed: an upper bound).
    const bytes = (held: CommittedEvent[]) =>
      held.reduce((sum, e) => sum + (this.due(sub, e) ? this.deps.frames.of(boardId, e).byteLength : 0), 0);
    sub.held!.push(...events);
    sub.heldBytes = (sub.heldBytes ?? 0) + bytes(events);
    const within = () => sub.heldBytes! <= SLOW_CONSUMER.bytes && sub.held!.length <= SLOW_CONSUMER.heldEvents;
    if (within()) return;
    sub.held = sub.held!.filter((e) => e.seq > sub.lastSeq); // the replay sent these meanwhile
    sub.heldBytes = bytes(sub.held);
    if (within()) return;
    sub.held = [];
    sub.heldBytes = 0;
    conn.close(CLOSE.slowConsumer, SLOW_CONSUMER_REASON);
  }

  /** Sends from the log everything after lastSeq, at the pace the client reads, then what was held meanwhile. */
  async catchUp(conn: Connection, boardId: string, sub: Subscription): Promise<void> {
    const current = () => this.deps.subscriptions.current(conn, boardId, sub);
    const sendNow = (e: CommittedEvent): boolean => {
      if (!current()) return false;
      this.send(conn, boardId, sub, e);
      return true;
    };
    let end;
    do {
      sub.readAgain = false;
      end = await this.deps.feed.replay(
        boardId,
        sub.lastSeq,
        (e) => (conn.backlog() > REPLAY_BACKLOG ? conn.drained().then(() => sendNow(e)) : sendNow(e)),
        current,
      );
    } while (end === 'done' && sub.readAgain);
    // Ended while the log was read (unsubscribed, or an access change): what it held is not its to send.
    if (end === 'stopped' || !current()) return;
    if (end === 'incomplete') return conn.close(CLOSE.shutdown, 'the event log is incomplete; reconnect with since');
    const held = inSeqOrder(sub.held ?? []);
    sub.held = null;
    sub.heldBytes = 0;
    this.push(conn, boardId, sub, held);
  }

  /** Brings every live subscription up to the log: one read per board, from its furthest-behind socket. */
  async catchUpAll(): Promise<void> {
    this.deps.streams.endAll();
    const boards = new Set<string>();
    for (const { subs } of this.deps.subscriptions.states())
      for (const boardId of subs?.keys() ?? []) boards.add(boardId);
    const behind = [...boards].map((boardId) => [boardId, this.catchUpFrom(boardId)] as const);
    for (const [boardId, from] of behind) if (from !== Infinity) await this.readUp(boardId, from);
  }

  /** Brings one board's live subscriptions up to the log (only its commits may have been missed). */
  async catchUpBoard(boardId: string): Promise<void> {
    this.deps.streams.end(boardId);
    const from = this.catchUpFrom(boardId);
    if (from !== Infinity) await this.readUp(boardId, from);
  }

  /**
   * Where a catch-up of the board reads its log from: the last seq its furthest-behind live
   * subscription has had; Infinity when none is live. Those still reading the log (catchUp) are
   * told to read it again once done, as what was missed may lie past their last page.
   */
  private catchUpFrom(boardId: string): number {
    let from = Infinity;
    for (const sub of this.deps.subscriptions.watchersOf(boardId)?.values() ?? [])
      if (sub.held) sub.readAgain = true;
      else from = Math.min(from, sub.lastSeq);
    return from;
  }

  /** The board's log after `from` to its live subscriptions, as a delivery; a log that cannot be read closes them. */
  private async readUp(boardId: string, from: number): Promise<void> {
    try {
      for await (const page of this.deps.feed.pagesAfter(boardId, from)) {
        // As a delivery: the stream's subscriptions (those that join it meanwhile included) have it published.
        this.deps.streams.publish(boardId, page);
        for (const [conn, sub] of this.deps.subscriptions.watchersOf(boardId) ?? [])
          if (!sub.held && !sub.joined) this.push(conn, boardId, sub, page);
      }
    } catch {
      for (const conn of [...(this.deps.subscriptions.watchersOf(boardId)?.keys() ?? [])])
        conn.close(CLOSE.shutdown, 'the event log cannot be read');
    }
  }

  /** Sends `ordered` (in seq order) after what the socket has had; a hole is filled from the log first. */
  push(conn: Connection, boardId: string, sub: Subscription, ordered: CommittedEvent[]): void {
    for (let i = 0; i < ordered.length; i++) {
      const e = ordered[i]!;
      if (e.seq <= sub.lastSeq) continue;
      if (e.seq > sub.lastSeq + 1) {
        sub.held = ordered.slice(i); // a hole: fill it from the log first
        sub.heldBytes = 0; // (counted from the next events held)
        void this.catchUp(conn, boardId, sub).catch(() => conn.close(CLOSE.shutdown, 'the event log cannot be read'));
        return;
      }
      this.send(conn, boardId, sub, e);
    }
    if (this.deps.subscriptions.current(conn, boardId, sub)) this.deps.streams.join(conn, boardId, sub);
  }

  private send(conn: Connection, boardId: string, sub: Subscription, e: CommittedEvent): void {
    sub.lastSeq = e.seq;
    // Every event passes here in seq order: past its start, the view follows its holder's leases (visibility.ts).
    const follows = e.seq > (sub.followsAfter ?? -1);
    if (follows) followLease(sub.view, e, false);
    const seen = this.due(sub, e);
    if (follows) followLease(sub.view, e, true);
    if (seen) transmit(conn, seen === e ? this.deps.frames.of(boardId, e) : this.deps.frames.fresh(boardId, seen));
  }

  /** The event as the subscription is sent it (its topics', as its view sees it), or null when it is sent nothing. */
  private due(sub: Subscription, e: CommittedEvent): CommittedEvent | null {
    if (!sub.topics.has('activity') && !sub.topics.has(topicOf(e.type))) return null;
    return eventFor(sub, e);
  }
}
