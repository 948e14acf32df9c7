// BoardSocket: one connection to GET /api/ws that keeps its subscriptions through drops. After a
// reconnect (backoff with jitter) each board resumes by `since` from the last event it counted and
// by `shoutsAfter` from the last shout, and anything seen twice is dropped (events by seq, shouts
// by id): every event reaches the listeners once and in order.
import { Emitter } from './emitter.js';
import { BoardApiError } from './errors.js';
import { openWebSocket, type WebSocketFactory, type WebSocketLike } from './web-socket.js';
import {
  topicOf,
  type ClientMessage,
  type LeaseEnded,
  type LeaseExpiring,
  type LoggedEvent,
  type EventLease,
  type ServerMessage,
  type Shout,
  type Topic,
} from './messages.js';

export interface BoardSocketOptions {
  /** The board's origin, e.g. https://board.example. */
  baseUrl: string;
  /** A service token (agb_…). Browsers leave it out: their session cookie goes with the upgrade. */
  token?: string;
  /** Extra upgrade headers (Node only), e.g. `cookie` and `origin` for a session. */
  headers?: Record<string, string>;
  /** Who this socket is (GET /api/whoami's principal): `direct` then fires only for shouts to it. */
  principal?: string;
  /** How sockets are made; by default the platform's WebSocket, or the `ws` package in Node. */
  webSocket?: WebSocketFactory;
  /** Reconnect delays: the first, and the most it grows to (doubling, with jitter). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Silence after which the socket pings, and after as long again gives the connection up (default 30 s). */
  idleMs?: number;
}

export interface SubscribeOptions {
  topics?: Topic[];
  /** The last seq already applied: the events after it are replayed first. */
  since?: number;
  /** Start from the board as it stands (`snapshot` messages) rather than from `since`. */
  snapshot?: boolean;
  /** The last shout id already seen: the shouts after it are sent first. */
  shoutsAfter?: string;
}

export type Subscribed = Extract<ServerMessage, { type: 'subscribed' }>;
export type SocketState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface BoardSocketEvents extends Record<string, unknown> {
  /** A board event of a subscribed topic, once each, in seq order. */
  event: LoggedEvent;
  /** One of your leases is running out (not in the log: no seq). */
  'lease.expiring': LeaseExpiring;
  'lease.expired': LeaseEnded;
  'lease.revoked': LeaseEnded;
  shout: { boardId: string; shout: Shout };
  /** A direct shout: to `principal` when it was given, else any this socket sees (to or from you). */
  direct: { boardId: string; shout: Shout };
  subscribed: Subscribed;
  /** `since` was older than the retained log: reload the board (GET /api/status, or a `snapshot` subscribe). */
  resync: { boardId: string; seq: number };
  /** The server ended a subscription (the board was deleted, your role changed). */
  unsubscribed: { boardId: string; reason: string | null };
  error: BoardApiError;
  open: { resumed: boolean };
  close: { code: number; reason: string; reconnecting: boolean };
  /** Every message as it came, duplicates included (snapshots, the roster, presence). */
  message: ServerMessage;
}

interface Subscription {
  boardId: string;
  topics: Topic[];
  snapshot: boolean;
  lastSeq: number | null;
  lastShoutId: string | null;
  shoutIds: Set<string>;
}

/** Shout ids remembered per board for dropping repeats. */
const SHOUT_MEMORY = 500;

export class BoardSocket extends Emitter<BoardSocketEvents> {
  private ws: WebSocketLike | null = null;
  private readonly subs = new Map<string, Subscription>();
  private current: SocketState = 'closed';
  private ended = true;
  private opened = false;
  private attempt = 0;
  private retry: ReturnType<typeof setTimeout> | null = null;
  private idle: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly options: BoardSocketOptions) {
    super();
  }

  get state(): SocketState {
    return this.current;
  }

  /** Opens the connection and resolves once it is open; it reconnects on its own until close(). */
  connect(): Promise<void> {
    if (this.ended) {
      this.ended = false;
      void this.open();
    }
    return new Promise((resolve, reject) => {
      if (this.current === 'open') return resolve();
      const offOpen = this.once('open', () => (offClose(), resolve()));
      const offClose = this.on('close', (c) => {
        if (c.reconnecting) return;
        offOpen();
        offClose();
        reject(new Error(`the board socket closed: ${c.code} ${c.reason}`));
      });
    });
  }

  /** Watches a board; kept across reconnects. Resolves with the server's `subscribed`. */
  subscribe(boardId: string, options: SubscribeOptions = {}): Promise<Subscribed> {
    const sub: Subscription = {
      boardId,
      topics: options.topics ?? ['activity'],
      snapshot: options.snapshot ?? false,
      lastSeq: options.since ?? null,
      lastShoutId: options.shoutsAfter ?? null,
      shoutIds: new Set(),
    };
    this.subs.set(boardId, sub);
    const confirmed = new Promise<Subscribed>((resolve, reject) => {
      const offOk = this.on('subscribed', (m) => {
        if (m.boardId !== boardId) return;
        offOk();
        offError();
        resolve(m);
      });
      // The server's error message names no board: the first one while this subscribe waits is its answer.
      const offError = this.on('error', (e) => (offOk(), offError(), reject(e)));
    });
    confirmed.catch(() => undefined); // a caller that does not await it still hears the refusal as an `error` event
    if (this.current === 'open') this.send(this.subscribeMessage(sub));
    return confirmed;
  }

  unsubscribe(boardId: string): void {
    if (this.subs.delete(boardId) && this.current === 'open') this.send({ type: 'unsubscribe', boardId });
  }

  /** The last seq counted on a board (where a resume starts), or null before any. */
  lastSeq(boardId: string): number | null {
    return this.subs.get(boardId)?.lastSeq ?? null;
  }

  close(): void {
    this.ended = true;
    this.clearTimers();
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      detach(ws);
      ws.close(1000, 'client closed');
    }
    if (this.current !== 'closed') {
      this.current = 'closed';
      this.emit('close', { code: 1000, reason: 'client closed', reconnecting: false });
    }
  }

  private async open(): Promise<void> {
    this.current = this.opened ? 'reconnecting' : 'connecting';
    const url = new URL(`${this.options.baseUrl.replace(/\/+$/, '')}/api/ws`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const headers = {
      ...this.options.headers,
      ...(this.options.token && { authorization: `Bearer ${this.options.token}` }),
    };
    let ws: WebSocketLike;
    try {
      ws = await (this.options.webSocket ?? openWebSocket)(url.href, headers);
    } catch (error) {
      return this.lost(4000, error instanceof Error ? error.message : String(error), true);
    }
    if (this.ended) return void (detach(ws), ws.close(1000, 'client closed'));
    this.ws = ws;
    let refused = false;
    ws.onopen = () => {
      const resumed = this.opened;
      this.opened = true;
      this.attempt = 0;
      this.current = 'open';
      this.armIdle();
      this.emit('open', { resumed });
      for (const sub of this.subs.values()) this.send(this.subscribeMessage(sub));
    };
    ws.onmessage = (e) => {
      this.armIdle();
      let message: ServerMessage;
      try {
        message = JSON.parse(String(e.data)) as ServerMessage;
      } catch {
        return;
      }
      this.handle(message);
    };
    // An upgrade the server refused (401, 403): the credential will not do better next time. (Only
    // Node's `ws` says so; a browser sees a plain close and keeps trying, with backoff.)
    ws.onerror = (e) =>
      void (refused ||= /Unexpected server response: 40[13]/.test(String((e as { message?: unknown }).message)));
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.lost(e.code, e.reason, refused || e.code === REVOKED);
    };
  }

  /** The connection ended: reconnect after a backoff, or stop for good. */
  private lost(code: number, reason: string, final: boolean): void {
    const ws = this.ws;
    this.ws = null;
    if (ws) detach(ws);
    this.clearTimers();
    if (this.ended) return;
    if (final) {
      this.ended = true;
      this.current = 'closed';
      return void this.emit('close', { code, reason, reconnecting: false });
    }
    this.current = 'reconnecting';
    this.emit('close', { code, reason, reconnecting: true });
    const initial = this.options.backoff?.initialMs ?? 250;
    const cap = Math.min(this.options.backoff?.maxMs ?? 10_000, initial * 2 ** this.attempt++);
    this.retry = setTimeout(() => void this.open(), cap / 2 + (Math.random() * cap) / 2);
  }

  /** Pings after a silence, and gives the connection up after a second one (a dead peer sends no close). */
  private armIdle(): void {
    if (this.idle) clearTimeout(this.idle);
    const ms = this.options.idleMs ?? 30_000;
    this.idle = setTimeout(() => {
      this.send({ type: 'ping' });
      this.idle = setTimeout(() => {
        const ws = this.ws;
        this.lost(4000, 'no answer from the server', false);
        if (ws) (ws.terminate ?? ws.close).call(ws);
      }, ms);
    }, ms);
  }

  private clearTimers(): void {
    if (this.retry) clearTimeout(this.retry);
    if (this.idle) clearTimeout(this.idle);
    this.retry = this.idle = null;
  }

  private send(message: ClientMessage): void {
    this.ws?.send(JSON.stringify(message));
  }

  private subscribeMessage(sub: Subscription): ClientMessage {
    const shouts = sub.topics.includes('shouts') || sub.topics.includes('activity');
    return {
      type: 'subscribe',
      boardId: sub.boardId,
      topics: sub.topics,
      ...(sub.lastSeq !== null ? { since: sub.lastSeq } : sub.snapshot ? { snapshot: true } : {}),
      ...(shouts && sub.lastShoutId !== null ? { shoutsAfter: sub.lastShoutId } : {}),
    };
  }

  private handle(m: ServerMessage): void {
    this.emit('message', m);
    switch (m.type) {
      case 'event':
        return this.event(m.boardId, m.seq, m.event);
      case 'shout':
        return this.shout(m.boardId, m.shout);
      case 'subscribed': {
        const sub = this.subs.get(m.boardId);
        if (sub && sub.lastSeq === null && !m.merged) sub.lastSeq = m.seq;
        return this.emit('subscribed', m);
      }
      case 'snapshot': {
        const sub = this.subs.get(m.boardId);
        if (sub && m.last === true && typeof m.seq === 'number') sub.lastSeq = Math.max(sub.lastSeq ?? 0, m.seq);
        const newest = (m.shouts as Shout[] | undefined)?.[0];
        if (sub && newest && sub.lastShoutId === null) this.remember(sub, newest.id);
        return;
      }
      case 'resync': {
        const sub = this.subs.get(m.boardId);
        if (sub) sub.lastSeq = m.seq;
        return this.emit('resync', { boardId: m.boardId, seq: m.seq });
      }
      case 'unsubscribed':
        if (m.reason !== undefined) this.subs.delete(m.boardId);
        return this.emit('unsubscribed', { boardId: m.boardId, reason: m.reason ?? null });
      case 'error':
        return this.emit('error', BoardApiError.fromSocket(m.error));
    }
  }

  private event(boardId: string, seq: number | null, event: LoggedEvent['event']): void {
    const workId = event.workId ?? '';
    if (seq === null) {
      if (event.type === 'lease.expiring')
        this.emit('lease.expiring', {
          boardId,
          workId,
          at: event.at,
          holder: String(event.data.holder),
          expiresAt: String(event.data.expiresAt),
        });
      return;
    }
    const sub = this.subs.get(boardId);
    if (sub && (sub.topics.includes('activity') || sub.topics.includes(topicOf(event.type)))) {
      if (sub.lastSeq !== null && seq <= sub.lastSeq) return; // seen before the drop
      sub.lastSeq = seq;
      this.emit('event', { boardId, seq, event });
    }
    // A holder also hears its own lease ending on a board it does not watch.
    if (event.type === 'lease.expired' || event.type === 'lease.revoked') {
      const ended: LeaseEnded = {
        boardId,
        workId,
        seq,
        at: event.at,
        lease: event.data.lease as EventLease,
        reason: typeof event.data.reason === 'string' ? event.data.reason : null,
      };
      this.emit(event.type, ended);
    }
  }

  private shout(boardId: string, shout: Shout): void {
    const sub = this.subs.get(boardId);
    if (sub) {
      if (sub.shoutIds.has(shout.id)) return;
      this.remember(sub, shout.id);
    }
    this.emit('shout', { boardId, shout });
    const principal = this.options.principal;
    if (shout.to !== null && (principal === undefined || shout.to === principal))
      this.emit('direct', { boardId, shout });
  }

  private remember(sub: Subscription, shoutId: string): void {
    sub.lastShoutId = shoutId;
    sub.shoutIds.add(shoutId);
    if (sub.shoutIds.size > SHOUT_MEMORY) sub.shoutIds.delete(sub.shoutIds.values().next().value!);
  }
}

/** Close code for a revoked credential: reconnecting would only be refused. */
const REVOKED = 4001;

/**
 * Stops hearing a connection being let go. Its errors are still heard, and dropped: one closed
 * while connecting reports the aborted handshake as an error, which `ws` would throw unheard.
 */
function detach(ws: WebSocketLike): void {
  ws.onopen = ws.onmessage = ws.onclose = null;
  ws.onerror = () => undefined;
}
