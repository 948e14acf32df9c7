// One WebSocket as the hub sees it (Connection): its sends batched per turn of the event loop,
// its backlog kept under its cap, its sends, joins and leaves ordered behind waiting publishes.
import type uWS from 'uWebSockets.js';
import type { Identity } from '../../auth/identity.js';
import type { Connection } from '../../ws/hub.js';
import { CLOSE, SLOW_CONSUMER, SLOW_CONSUMER_REASON } from '../../ws/protocol.js';
import type { BatchedSocket, PublishBatch, SocketOp } from './publish-batch.js';

export interface SocketData {
  identity: Identity;
  conn?: SocketConnection;
}

/** What a socket tells its server's set of sockets (src/http/uws/sockets.ts). */
export interface SocketPool {
  /** `conn` has its first message waiting: write it at the end of this turn. */
  queued(conn: SocketConnection): void;
  /** `conn` joined its first topic: what a publish leaves it is to be checked against its cap. */
  joinedTopics(conn: SocketConnection): void;
  /** `conn` is closing or gone: nothing more to check or write. */
  closed(conn: SocketConnection): void;
  ended(conn: SocketConnection): void;
}

/** What a server's sockets share (one object, not three fields in each). */
export interface SocketShared {
  /** The cap on a socket's backlog, in bytes. */
  cap: number;
  pool: SocketPool;
  batch: PublishBatch;
}

/**
 * A topic no message is published to, joined by every socket that joins any: uWS 20.x frees a
 * socket's queue of published messages, unsent, when it leaves its last topic (a message published
 * just before an unsubscribe would be lost).
 */
const ANCHOR_TOPIC = '~anchor';

/**
 * One socket. What is sent during a turn of the event loop goes out corked at its end, so a
 * socket hearing many messages at once costs one write, not one each; the cap counts both what
 * waits here and what uWS holds.
 */
export class SocketConnection implements Connection, BatchedSocket {
  private closed = false;
  /** What waits for the end of this turn; made when the first message waits (an idle socket holds none). */
  private pending: (string | Uint8Array)[] | null = null;
  private pendingBytes = 0;
  /** Bytes of this socket's sends waiting behind a publish (PublishBatch). */
  private deferredBytes = 0;
  /**
   * At least what uWS holds unsent of what this socket was sent itself (exact when last asked;
   * only drains after). Published messages are not counted: a socket joined to a topic asks uWS.
   */
  private heldByUws = 0;
  /** Joined to a topic (and so to the anchor): what uWS holds for it may include published messages. */
  private onTopics = false;
  /** Readers waiting for an empty backlog; made when the first one waits. */
  private waiting: (() => void)[] | null = null;
  /** While readers wait: fires once the client has read nothing for SLOW_CONSUMER.stalledMs. */
  private stall: ReturnType<typeof setTimeout> | null = null;

  constructor(
    readonly id: number,
    private readonly ws: uWS.WebSocket<SocketData>,
    readonly identity: Identity,
    private readonly shared: SocketShared,
  ) {}

  private get cap(): number {
    return this.shared.cap;
  }

  private get pool(): SocketPool {
    return this.shared.pool;
  }

  private get batch(): PublishBatch {
    return this.shared.batch;
  }

  send(message: string | Uint8Array): boolean {
    if (this.closed) return false;
    const size = typeof message === 'string' ? Buffer.byteLength(message) : message.byteLength;
    // uWS is asked what it holds only when the bound kept here says the message may not fit (or
    // may be wrong: a published message is not in it).
    const waiting = this.pendingBytes + this.deferredBytes;
    if (this.onTopics || this.heldByUws + waiting + size > this.cap) {
      this.heldByUws = this.ws.getBufferedAmount();
      if (this.heldByUws + waiting + size > this.cap) return false;
    }
    if (this.batch.waiting()) {
      // A publish waits: this goes out after it.
      this.deferredBytes += size;
      this.batch.defer({ kind: 'send', conn: this, message, size });
      return true;
    }
    this.queue(message, size);
    return true;
  }

  /** Queues a message for the end of this turn of the event loop. */
  private queue(message: string | Uint8Array, size: number): void {
    if (this.pending === null) {
      this.pending = [message];
      this.pool.queued(this);
    } else this.pending.push(message);
    this.pendingBytes += size;
  }

  /** Does what waited behind a publish, now that it went out. */
  apply(op: SocketOp): void {
    if (this.closed) return; // ended: its bytes were forgotten then
    if (op.kind === 'send') {
      this.deferredBytes -= op.size;
      this.queue(op.message, op.size);
    } else if (op.kind === 'join') this.joinNow(op.topic);
    else this.leaveNow(op.topic);
  }

  /** Writes what waits, in order, in one corked batch (a lone message needs no cork). */
  flush(): void {
    if (this.closed || this.pending === null) return;
    const out = this.pending;
    const bytes = this.pendingBytes;
    this.pending = null;
    this.pendingBytes = 0;
    let dropped = false;
    if (out.length === 1) dropped = this.ws.send(out[0]!, false) === 2;
    else {
      this.ws.cork(() => {
        for (const message of out) dropped ||= this.ws.send(message, false) === 2;
      });
    }
    if (dropped) return this.close(CLOSE.slowConsumer, SLOW_CONSUMER_REASON);
    this.heldByUws += bytes; // at most: uWS may have written some of it out already
    this.wakeIfEmpty();
  }

  backlog(): number {
    return this.closed ? 0 : this.ws.getBufferedAmount() + this.pendingBytes + this.deferredBytes;
  }

  join(topic: string): void {
    if (this.batch.waiting()) return this.batch.defer({ kind: 'join', conn: this, topic });
    this.joinNow(topic);
  }

  private joinNow(topic: string): void {
    if (this.closed) return;
    if (!this.onTopics) {
      this.onTopics = true;
      this.ws.subscribe(ANCHOR_TOPIC);
      this.pool.joinedTopics(this);
    }
    this.ws.subscribe(topic);
  }

  leave(topic: string): void {
    if (this.batch.waiting()) return this.batch.defer({ kind: 'leave', conn: this, topic });
    this.leaveNow(topic);
  }

  private leaveNow(topic: string): void {
    if (!this.closed) this.ws.unsubscribe(topic);
  }

  /** After a publish: a backlog past the cap is a slow consumer, as a send refused would be. */
  checkBacklog(): void {
    if (this.backlog() > this.cap) this.close(CLOSE.slowConsumer, SLOW_CONSUMER_REASON);
  }

  /**
   * Resolves once the backlog has gone out, or the socket closed: a client that reads nothing for
   * SLOW_CONSUMER.stalledMs meanwhile is a slow consumer, so a sender never waits on it without end.
   */
  drained(): Promise<void> {
    if (this.backlog() === 0) return Promise.resolve();
    // Its callback made only when a reader waits: an idle socket holds no closure for it.
    this.stall ??= setTimeout(() => this.stalled(), SLOW_CONSUMER.stalledMs);
    return new Promise<void>((resolve) => (this.waiting ??= []).push(resolve));
  }

  private stalled(): void {
    this.stall = null;
    this.close(CLOSE.slowConsumer, SLOW_CONSUMER_REASON);
  }

  /** uWS wrote some of what it held: learn how much it holds now, and wake the readers waiting for an empty backlog. */
  onDrain(): void {
    if (!this.closed) this.heldByUws = this.ws.getBufferedAmount();
    this.stall?.refresh(); // the client read some: it is not stalled
    this.wakeIfEmpty();
  }

  private wakeIfEmpty(): void {
    if (this.waiting === null || this.backlog() > 0) return;
    const ready = this.waiting;
    this.waiting = null;
    if (this.stall !== null) clearTimeout(this.stall);
    this.stall = null;
    for (const resolve of ready) resolve();
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.batch.flush(); // what was accepted goes out before the close frame: what waits behind a publish,
    this.flush(); // then what waits for the end of the turn
    if (this.closed) return;
    this.closed = true;
    this.pool.closed(this);
    this.ws.end(code, reason);
    this.wakeIfEmpty();
  }

  /** The socket is gone (uWS frees it after its close callback). */
  ended(): void {
    this.closed = true;
    this.pending = null;
    this.pendingBytes = 0;
    this.deferredBytes = 0; // what waits behind a publish is skipped when it comes up
    this.pool.ended(this);
    this.wakeIfEmpty();
  }
}
