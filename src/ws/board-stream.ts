// A board's events published once to the engine's topics, for its subscriptions that are live and
// have had every event up to what the stream published (each joins when it has): the common case
// costs one publish per event and topic, not one send per socket.
import type { CommittedEvent } from '../../actors/board-actor.js';
import type { Connection } from './connection.js';
import { topicOf } from './protocol.js';
import type { Subscription } from './subscriptions.js';
import { eventTopic, streamTopics } from './topics.js';

interface Stream {
  /** The last seq published; every joined subscription has had each event up to it, in order. */
  published: number;
  /** Subscriptions on it; the stream ends with the last one. */
  joined: number;
}

export interface BoardStreamsDeps {
  /** One message to every socket joined to `topic` (HubDeps.publish). */
  publish(topic: string, message: Uint8Array): void;
  frame(boardId: string, e: CommittedEvent): Uint8Array;
  /** A board's subscriptions, for ending its stream. */
  watchersOf(boardId: string): Iterable<[Connection, Subscription]>;
}

export class BoardStreams {
  /** Boards with subscriptions on their event stream. */
  private readonly streams = new Map<string, Stream>();

  constructor(private readonly deps: BoardStreamsDeps) {}

  /** Publishes the board's events to its stream's subscriptions; a hole ends the stream (each then fills it from the log). */
  publish(boardId: string, events: CommittedEvent[]): void {
    const stream = this.streams.get(boardId);
    if (!stream) return;
    for (const e of events) {
      if (e.seq <= stream.published) continue;
      if (e.seq > stream.published + 1) return this.end(boardId);
      const frame = this.deps.frame(boardId, e);
      this.deps.publish(eventTopic(boardId, topicOf(e.type)), frame);
      this.deps.publish(eventTopic(boardId, 'activity'), frame);
      stream.published = e.seq;
    }
  }

  /** A live subscription of a whole view that has had every event the stream has published (the first to join sets that) goes on it. */
  join(conn: Connection, boardId: string, sub: Subscription): void {
    if (!sub.whole || sub.joined || sub.held || sub.lastSeq < 0) return;
    const stream =
      this.streams.get(boardId) ?? this.streams.set(boardId, { published: sub.lastSeq, joined: 0 }).get(boardId)!;
    if (stream.published !== sub.lastSeq) return;
    sub.joined = true;
    stream.joined++;
    for (const topic of streamTopics(boardId, sub.topics)) conn.join(topic);
  }

  /** Takes a subscription off the board's stream: from here on it is sent event by event, from where the stream was. */
  leave(conn: Connection, boardId: string, sub: Subscription): void {
    if (!sub.joined) return;
    const stream = this.streams.get(boardId)!;
    sub.joined = false;
    sub.lastSeq = stream.published;
    for (const topic of streamTopics(boardId, sub.topics)) conn.leave(topic);
    if (--stream.joined === 0) this.streams.delete(boardId);
  }

  /** Every subscription of the board leaves its stream (a hole in what the bus brought, or the bus was down). */
  end(boardId: string): void {
    for (const [conn, sub] of this.deps.watchersOf(boardId)) this.leave(conn, boardId, sub);
    this.streams.delete(boardId);
  }

  /** Every board with a stream, ended: each of their subscriptions goes on event by event. */
  endAll(): void {
    for (const boardId of [...this.streams.keys()]) this.end(boardId);
  }

  /** The last seq a subscription has had. */
  lastSeqOf(boardId: string, sub: Subscription): number {
    return sub.joined ? this.streams.get(boardId)!.published : sub.lastSeq;
  }
}
