// A board's live feed over /api/ws, the page's only way of keeping up (no REST read, so watching
// never spends the person's rate budget). The first subscribe asks for a snapshot (the board's
// cards in pages, newest events and shouts); a drop resumes after the last seq seen (and the last
// shout), with nothing missed and no event passed on twice; a resync, a gap or a rewind reloads
// the snapshot once. When the person's role changes the server unsubscribes the socket: the feed
// subscribes again under the new role, and a refusal then means they are no longer a member.
import { signal } from '@preact/signals';
import type { BoardEvent, Card, Presence, Shout } from './types.js';

export type FeedState = 'connecting' | 'live' | 'reconnecting' | 'closed' | 'removed';

export type { BoardEvent, Shout };

/** The board as it stood at `seq`, put together from the snapshot's pages. */
export interface Snapshot {
  seq: number;
  name: string;
  cards: Card[];
  /** The newest events up to `seq`, newest first. */
  recent: BoardEvent[];
  /** The newest shouts, newest first. */
  shouts: Shout[];
}

export interface FeedHandlers {
  /** The board loaded (or reloaded); without this handler the feed starts from now and never loads the board. */
  snapshot?(s: Snapshot): void;
  /** Without a snapshot handler: what was missed cannot be replayed (reload what the page shows). */
  resync?(): void;
  event(e: BoardEvent): void;
  shout(s: Shout): void;
  /** Everyone seen on the board (on every subscribe), then each heartbeat. */
  roster?(agents: Presence[], onlineWithinMs: number): void;
  presence?(agent: Presence): void;
}

const RETRY_MS = [500, 1000, 2000, 5000, 10_000];

export class BoardFeed {
  readonly state = signal<FeedState>('connecting');
  /** This person's role on the board, as the server told the subscription. */
  readonly role = signal<string | null>(null);
  /** Why the board can no longer be watched (the person lost access), or null. */
  readonly ended = signal<string | null>(null);
  /** Snapshots loaded (1 after the first load; each resync, gap or rewind adds one). */
  readonly loads = signal(0);
  /** Events that arrived past a hole in seq (each reloads the board; the server promises none). */
  readonly gaps = signal(0);
  private socket: WebSocket | null = null;
  /** Set while subscribing again after the server unsubscribed the board: why it did. */
  private resubscribing: string | null = null;
  /** The next subscribe asks for a snapshot (first load, or a reload); events meanwhile are not applied. */
  private wantSnapshot: boolean;
  /** The snapshot's pages so far: its cards, and its newest events and shouts (the last pages may share them out). */
  private pages = emptyPages();
  private attempts = 0;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastSeq: number | null = null;

  constructor(
    private readonly boardId: string,
    private readonly on: FeedHandlers,
    /** The newest shout the page holds, for resuming shouts (they are not in the event log). */
    private readonly lastShout: () => string | null = () => null,
  ) {
    this.wantSnapshot = on.snapshot !== undefined;
    this.open();
  }

  get seq(): number | null {
    return this.lastSeq;
  }

  /** Drops the socket as a network would (the feed reconnects). */
  drop(): void {
    this.socket?.close();
  }

  /** Loads the board again from a snapshot (after a rewind, or anything the events cannot express). */
  reload(): void {
    if (!this.on.snapshot) return this.on.resync?.();
    if (this.wantSnapshot) return;
    this.wantSnapshot = true;
    if (this.socket?.readyState !== WebSocket.OPEN) return; // the next open subscribes with a snapshot
    this.socket.send(JSON.stringify({ type: 'unsubscribe', boardId: this.boardId }));
    this.subscribe(this.socket);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.socket?.close(1000, 'page left');
    this.state.value = 'closed';
  }

  private open(): void {
    const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/ws`);
    this.socket = socket;
    socket.onopen = () => this.subscribe(socket);
    socket.onmessage = (m) => this.message(JSON.parse(String(m.data)) as Record<string, unknown>);
    socket.onclose = () => {
      if (this.socket !== socket || this.stopped) return;
      this.state.value = 'reconnecting';
      this.timer = setTimeout(() => this.open(), RETRY_MS[Math.min(this.attempts++, RETRY_MS.length - 1)]);
    };
  }

  private subscribe(socket: WebSocket): void {
    const topics = this.on.roster ? ['activity', 'presence'] : ['activity'];
    const shout = this.lastShout();
    const start = this.wantSnapshot
      ? { snapshot: true }
      : this.lastSeq === null
        ? {}
        : { since: this.lastSeq, ...(shout ? { shoutsAfter: shout } : {}) };
    this.pages = emptyPages();
    socket.send(JSON.stringify({ type: 'subscribe', boardId: this.boardId, topics, ...start }));
  }

  private message(m: Record<string, unknown>): void {
    if (m.boardId !== undefined && m.boardId !== this.boardId) return;
    if (m.type === 'unsubscribed' && this.socket) {
      if (m.reason === undefined) return; // our own unsubscribe, before a reload
      this.resubscribing = typeof m.reason === 'string' ? m.reason : 'Your access to this board changed.';
      this.state.value = 'connecting';
      this.subscribe(this.socket);
    } else if (m.type === 'error' && this.resubscribing !== null) {
      this.ended.value = this.resubscribing.includes('no longer')
        ? this.resubscribing
        : ((m.error as { message?: string } | undefined)?.message ?? 'You can no longer watch this board.');
      this.role.value = null;
      this.stopped = true;
      this.socket?.close(1000, 'no access');
      this.state.value = 'removed';
    } else if (m.type === 'subscribed') {
      this.resubscribing = null;
      this.attempts = 0;
      if (typeof m.role === 'string') this.role.value = m.role;
      this.lastSeq ??= this.wantSnapshot ? null : (m.seq as number);
      if (!this.wantSnapshot) this.state.value = 'live';
    } else if (m.type === 'snapshot') {
      this.snapshotPage(m);
    } else if (this.wantSnapshot) {
      // Anything before the snapshot is in it (or belongs to the subscription being replaced).
    } else if (m.type === 'event') {
      this.event(m);
    } else if (m.type === 'shout') {
      this.on.shout(m.shout as Shout);
    } else if (m.type === 'roster') {
      this.on.roster?.(m.agents as Presence[], m.onlineWithinMs as number);
    } else if (m.type === 'presence') {
      this.on.presence?.(m.agent as Presence);
    } else if (m.type === 'resync') {
      this.reload();
    }
  }

  private snapshotPage(m: Record<string, unknown>): void {
    this.pages.cards.push(...(m.items as Card[]));
    this.pages.recent.push(...((m.recent as BoardEvent[] | undefined) ?? []));
    this.pages.shouts.push(...((m.shouts as Shout[] | undefined) ?? []));
    if (!m.last) return;
    const { cards, recent, shouts } = this.pages;
    this.pages = emptyPages();
    this.wantSnapshot = false;
    this.lastSeq = m.seq as number;
    this.loads.value++;
    this.on.snapshot?.({
      seq: m.seq as number,
      name: m.name as string,
      cards,
      recent,
      shouts,
    });
    this.state.value = 'live';
  }

  private event(m: Record<string, unknown>): void {
    const seq = m.seq as number | null;
    if (seq !== null && this.lastSeq !== null) {
      if (seq <= this.lastSeq) return;
      if (seq > this.lastSeq + 1) {
        this.gaps.value++;
        return this.reload();
      }
    }
    if (seq !== null) this.lastSeq = seq;
    this.on.event({ ...(m.event as Omit<BoardEvent, 'seq'>), seq });
  }
}

const emptyPages = (): Pick<Snapshot, 'cards' | 'recent' | 'shouts'> => ({ cards: [], recent: [], shouts: [] });
