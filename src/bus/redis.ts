// The bus across nodes: each commit is delivered to this node's sockets at once and published on
// the board's Redis channel; every other node delivers what it receives. What is lost while Redis
// is away is read back from the log: when the receiving connection is back (and subscribed again)
// this node catches up, and when the publishing connection is back it tells the other nodes to.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { CommittedEvent } from '../../store/ports/store.js';
import {
  NoticeListeners,
  type AnyNotice,
  type BatchesReceived,
  type Bus,
  type BusHandler,
  type CatchUpNotice,
  type NoticeHandler,
  type NoticeHandlers,
  type NoticeShape,
} from './bus.js';

const CHANNEL = 'board:';
const NOTICES = 'notices';

export class RedisBus<N extends NoticeShape = AnyNotice> implements Bus<N> {
  private readonly node = randomUUID();
  private readonly handlers = new Map<BusHandler, (boardId: string) => boolean>();
  /** How each message this node publishes begins: what it hears back of its own is dropped unread. */
  private readonly ownPrefix = `{"node":${JSON.stringify(this.node)},`;
  private readonly listeners = new NoticeListeners<N>();
  private readonly pub: Redis;
  private readonly sub: Redis;

  private lost = 0;
  private readonly batches = { read: 0, skipped: 0 };
  private reportedDown = false;
  private closing = false;

  /** `onHealth` hears once when cross-node delivery goes down and once when it is back. */
  constructor(
    url: string,
    private readonly onHealth: (health: 'ok' | 'degraded', cause?: unknown) => void = () => undefined,
  ) {
    const options = {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      retryStrategy: (times: number) => Math.min(times * 200, 2000),
    };
    this.pub = new Redis(url, options);
    this.sub = new Redis(url, { ...options, enableOfflineQueue: true });
    for (const client of [this.pub, this.sub]) client.on('error', (e) => this.failed(e));
    this.sub.on('close', () => void this.lost++);
    this.sub.on('pmessage', (_pattern, channel, message) => this.receive(channel, message));
    this.sub.on('message', (_channel, message) => this.receiveNotice(message));
    this.onReconnect(this.sub, () => {
      // ioredis subscribes again right after 'ready'; a ping answered after that means we hear again.
      setImmediate(
        () =>
          void this.sub.ping().then(
            () => this.noticeLocally({ kind: 'catch-up' }),
            (e: unknown) => this.failed(e),
          ),
      );
    });
    this.onReconnect(this.pub, () =>
      this.pub
        .publish(NOTICES, JSON.stringify({ node: this.node, notice: { kind: 'catch-up' } }))
        .catch((e: unknown) => this.failed(e)),
    );
    void this.sub.psubscribe(`${CHANNEL}*`).catch((e: unknown) => this.failed(e));
    void this.sub.subscribe(NOTICES).catch((e: unknown) => this.failed(e));
  }

  /** Connected to Redis for both publishing and receiving. */
  get healthy(): boolean {
    return this.pub.status === 'ready' && this.sub.status === 'ready';
  }

  get interruptions(): number {
    return this.lost;
  }

  get received(): BatchesReceived {
    return { ...this.batches };
  }

  get health(): 'ok' | 'degraded' {
    return this.healthy ? 'ok' : 'degraded';
  }

  publish(boardId: string, events: CommittedEvent[]): void {
    this.deliver(boardId, events);
    this.pub
      .publish(`${CHANNEL}${boardId}`, JSON.stringify({ node: this.node, boardId, events }))
      .catch((e: unknown) => this.failed(e));
  }

  subscribe(handler: BusHandler, interested: (boardId: string) => boolean = () => true): () => void {
    this.handlers.set(handler, interested);
    return () => this.handlers.delete(handler);
  }

  notify(notice: N): void {
    this.noticeLocally(notice);
    this.pub.publish(NOTICES, JSON.stringify({ node: this.node, notice })).catch((e: unknown) => this.failed(e));
  }

  onNotice(handler: NoticeHandler<N>): () => void {
    return this.listeners.onNotice(handler);
  }

  listen(handlers: Partial<NoticeHandlers<N | CatchUpNotice>>): () => void {
    return this.listeners.listen(handlers);
  }

  private receiveNotice(message: string): void {
    try {
      const parsed = JSON.parse(message) as { node?: string; notice?: N | CatchUpNotice };
      if (parsed.node === this.node || !parsed.notice) return;
      this.noticeLocally(parsed.notice);
    } catch {
      // not ours
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.handlers.clear();
    this.listeners.clear();
    this.pub.disconnect();
    this.sub.disconnect();
  }

  private noticeLocally(notice: N | CatchUpNotice): void {
    this.listeners.hear(notice);
  }

  /** Runs `then` each time `client` is ready again after its first connection, or after an outage that began before it. */
  private onReconnect(client: Redis, then: () => void): void {
    let connected = false;
    client.on('ready', () => {
      if (connected || this.reportedDown) then();
      connected = true;
      if (this.reportedDown && this.healthy) {
        this.reportedDown = false;
        this.onHealth('ok');
      }
    });
  }

  private failed(cause: unknown): void {
    if (this.reportedDown || this.closing) return;
    this.reportedDown = true;
    this.onHealth('degraded', cause);
  }

  private receive(channel: string, message: string): void {
    if (message.startsWith(this.ownPrefix)) return; // delivered here when published
    const board = channel.slice(CHANNEL.length);
    const wanted = [...this.handlers].filter(([, interested]) => interested(board));
    if (!wanted.length) return void this.batches.skipped++;
    this.batches.read++;
    let parsed: { node?: string; boardId?: string; events?: CommittedEvent[] };
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if (parsed.node === this.node || parsed.boardId !== board || !Array.isArray(parsed.events)) return;
    for (const [handler] of wanted) handler(board, parsed.events);
  }

  private deliver(boardId: string, events: CommittedEvent[]): void {
    for (const handler of this.handlers.keys()) handler(boardId, events);
  }
}
