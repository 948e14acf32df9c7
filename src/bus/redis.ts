// The bus across nodes: each commit is delivered to this node's sockets at once and published on
// the board's Redis channel; every other node that has asked for the board (`hear`: a board homed
// or watched there) delivers what it receives, and no other node receives it. What is lost while
// Redis is away is read back from the log: when the receiving connection is back (and subscribed
// again) this node catches up, and when the publishing connection is back it tells the other
// nodes to.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { CommittedEvent } from '../../store/ports/store.js';
import {
  NoticeListeners,
  type AnyNotice,
  type BatchesReceived,
  type BoardPredicate,
  type Bus,
  type BusHandler,
  type CatchUpNotice,
  type NoticeHandler,
  type NoticeHandlers,
  type NoticeShape,
} from './bus.js';

const CHANNEL = 'board:';
const EVERY_BOARD = `${CHANNEL}*`;
const NOTICES = 'notices';
/** How often the channels of boards no handler wants any more are given up. */
const GIVE_UP_MS = 30_000;
/** How long `hear` waits for Redis to confirm a board's channel before it lets its caller go on. */
const HEAR_WAIT_MS = 2_000;

/**
 * A board's channel this node asked for. `term` is set once Redis confirmed it on the connection
 * it was asked on, and ends when that connection closes; `askedOn` is that connection (-1: to be
 * asked on the next one).
 */
interface Channel {
  term: number | null;
  askedOn: number;
  confirmed: Promise<void>;
}

export class RedisBus<N extends NoticeShape = AnyNotice> implements Bus<N> {
  private readonly node = randomUUID();
  /** Each handler, with whether it reads a board's commits and whether it needs the board's own channel for them. */
  private readonly handlers = new Map<BusHandler, { interested: BoardPredicate; keeps: BoardPredicate }>();
  /** How each message this node publishes begins: what it hears back of its own is dropped unread. */
  private readonly ownPrefix = `{"node":${JSON.stringify(this.node)},`;
  private readonly listeners = new NoticeListeners<N>();
  private readonly pub: Redis;
  private readonly sub: Redis;

  private lost = 0;
  private readonly batches = { read: 0, skipped: 0 };
  /** The boards' channels this node receives. */
  private readonly channels = new Map<string, Channel>();
  private terms = 0;
  /** Every board's channel (an operator's firehose): asked, and confirmed. While on, commits come by the pattern alone. */
  private everyBoard: 'off' | 'asked' | 'on' = 'off';
  private everyBoardConfirmed: Promise<void> = Promise.resolve();
  /** The pattern's latest ask (an older ask's confirmation does not turn it on) and the connection it was asked on. */
  private patternAsks = 0;
  private patternAskedOn = -1;
  private noticesAskedOn = -1;
  private readonly givingUp: NodeJS.Timeout;
  private reportedDown = false;
  private closing = false;

  /** `onHealth` hears once when cross-node delivery goes down and once when it is back; `giveUpMs` is how often unwanted boards' channels are given up. */
  constructor(
    url: string,
    private readonly onHealth: (health: 'ok' | 'degraded', cause?: unknown) => void = () => undefined,
    giveUpMs = GIVE_UP_MS,
  ) {
    const options = {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      retryStrategy: (times: number) => Math.min(times * 200, 2000),
    };
    this.pub = new Redis(url, options);
    // What the receiving connection subscribes to is the bus's own state, asked again on each new
    // connection (`askOnThisConnection`): ioredis's own re-subscribe forgets what it had sent on a
    // connection lost again before Redis answered.
    this.sub = new Redis(url, { ...options, enableOfflineQueue: true, autoResubscribe: false });
    for (const client of [this.pub, this.sub]) client.on('error', (e) => this.failed(e));
    this.sub.on('close', () => this.lostConnection());
    this.sub.on('ready', () => this.askOnThisConnection());
    // A board's commit comes by its channel, and while every board is heard by the pattern too: it
    // is taken from one. (A batch may come by both in the moment the pattern is confirmed; every
    // part downstream drops a seq it has had.)
    this.sub.on('pmessage', (_pattern, channel, message) => this.everyBoard === 'on' && this.receive(channel, message));
    this.sub.on('message', (channel, message) => {
      if (channel === NOTICES) this.receiveNotice(message);
      else if (this.everyBoard !== 'on') this.receive(channel, message);
    });
    this.onReconnect(this.sub, () => {
      // Everything is asked again as the connection is ready; a ping answered after that means we hear again.
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
    this.askOnThisConnection();
    this.givingUp = setInterval(() => this.giveUpUnwanted(), giveUpMs);
    this.givingUp.unref();
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

  subscribe(
    handler: BusHandler,
    interested: BoardPredicate = () => true,
    keeps: BoardPredicate = interested,
  ): () => void {
    this.handlers.set(handler, { interested, keeps });
    return () => this.handlers.delete(handler);
  }

  hear(boardId: string): Promise<void> {
    const known = this.channels.get(boardId);
    // While Redis is away, at once: the catch-up when it is back covers what is missed meanwhile.
    if (known) return this.healthy ? known.confirmed : Promise.resolve();
    const channel: Channel = { term: null, askedOn: -1, confirmed: Promise.resolve() };
    this.channels.set(boardId, channel);
    this.ask(boardId, channel);
    return channel.confirmed;
  }

  hearing(boardId: string): number | null {
    const channel = this.channels.get(boardId);
    if (!channel) void this.hear(boardId);
    return channel?.term ?? null;
  }

  hearAll(on: boolean): Promise<void> {
    if (!on) {
      if (this.everyBoard === 'off') return Promise.resolve();
      this.everyBoard = 'off'; // board channels' messages count again at once
      this.patternAsks++;
      this.patternAskedOn = -1;
      void this.sub.punsubscribe(EVERY_BOARD).catch((e: unknown) => this.failed(e));
      return Promise.resolve();
    }
    if (this.everyBoard === 'off') {
      this.everyBoard = 'asked';
      this.askPattern();
    }
    return this.healthy ? this.everyBoardConfirmed : Promise.resolve();
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
    clearInterval(this.givingUp);
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

  /**
   * Subscribes to the board's channel. Its term is set once Redis confirms, on the connection it
   * was asked on and for the entry still asking (commands go in order, so after any give-up
   * before); a refused ask is asked again on the next connection.
   */
  private ask(boardId: string, channel: Channel): void {
    const on = (channel.askedOn = this.lost);
    let late = false;
    const confirmed = this.sub.subscribe(`${CHANNEL}${boardId}`).then(
      () => {
        if (this.channels.get(boardId) === channel && channel.askedOn === on && this.lost === on)
          channel.term = ++this.terms;
        // Its caller went on without it: what was committed meanwhile is read back from the log.
        if (late) this.noticeLocally({ kind: 'catch-up', boardId });
      },
      (e: unknown) => {
        if (channel.askedOn === on) channel.askedOn = -1;
        this.failed(e);
      },
    );
    channel.confirmed = this.healthy ? waitAtMost(confirmed, HEAR_WAIT_MS, () => (late = true)) : Promise.resolve();
  }

  /** Every board's channel: on once Redis confirms this ask, unless turned off or asked again meanwhile, or the connection was lost. */
  private askPattern(): void {
    const ask = ++this.patternAsks;
    const on = (this.patternAskedOn = this.lost);
    const confirmed = this.sub.psubscribe(EVERY_BOARD).then(
      () => {
        if (this.patternAsks === ask && this.lost === on && this.everyBoard === 'asked') this.everyBoard = 'on';
      },
      (e: unknown) => {
        if (this.patternAsks === ask) this.patternAskedOn = -1;
        this.failed(e);
      },
    );
    this.everyBoardConfirmed = this.healthy ? waitAtMost(confirmed, HEAR_WAIT_MS) : Promise.resolve();
  }

  /** The receiving connection closed: what it heard ends there. Each channel's term ends, and the pattern waits to be confirmed again. */
  private lostConnection(): void {
    this.lost++;
    for (const channel of this.channels.values()) channel.term = null;
    if (this.everyBoard === 'on') this.everyBoard = 'asked';
  }

  /** Asks this connection for what it has not been asked: the notices, every board's channel wanted, and the pattern while on. */
  private askOnThisConnection(): void {
    const on = this.lost;
    if (this.noticesAskedOn !== on) {
      this.noticesAskedOn = on;
      void this.sub.subscribe(NOTICES).catch((e: unknown) => {
        if (this.noticesAskedOn === on) this.noticesAskedOn = -1;
        this.failed(e);
      });
    }
    for (const [boardId, channel] of this.channels) if (channel.askedOn !== on) this.ask(boardId, channel);
    if (this.everyBoard !== 'off' && this.patternAskedOn !== on) this.askPattern();
  }

  /**
   * Gives up the channels of boards no handler keeps any more (no socket subscribes to them, no
   * actor holds them); while the pattern is on, what a firehose wants of them comes by it.
   */
  private giveUpUnwanted(): void {
    const wants = [...this.handlers.values()];
    // Until Redis has confirmed the pattern (a reconnect asks again), a channel still carries what a firehose wants.
    const byPattern = this.everyBoard === 'on';
    for (const boardId of this.channels.keys()) {
      if (wants.some(({ interested, keeps }) => (byPattern ? keeps : interested)(boardId))) continue;
      this.channels.delete(boardId);
      void this.sub.unsubscribe(`${CHANNEL}${boardId}`).catch((e: unknown) => this.failed(e));
    }
  }

  private failed(cause: unknown): void {
    if (this.reportedDown || this.closing) return;
    this.reportedDown = true;
    this.onHealth('degraded', cause);
  }

  private receive(channel: string, message: string): void {
    if (message.startsWith(this.ownPrefix)) return; // delivered here when published
    const board = channel.slice(CHANNEL.length);
    const wanted = [...this.handlers].filter(([, { interested }]) => interested(board));
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

/**
 * `confirmed`, or after `ms` if it is not by then (`onLate` is told): a connection lost meanwhile
 * is caught up after it, and a confirmation that comes late asks for a catch-up itself.
 */
function waitAtMost(confirmed: Promise<void>, ms: number, onLate: () => void = () => undefined): Promise<void> {
  let waited: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (waited = setTimeout(() => (onLate(), resolve()), ms)));
  return Promise.race([confirmed, late]).finally(() => clearTimeout(waited));
}
