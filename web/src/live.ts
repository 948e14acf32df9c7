// A board's live feed over /api/ws: subscribes from the last seq it saw, so a drop resumes with
// nothing missed; an event at or below that seq is never passed on twice. When the person's role
// on the board changes the server unsubscribes the socket: the feed subscribes again under the new
// role, and a refusal then means they are no longer a member.
import { signal } from '@preact/signals';

export type FeedState = 'connecting' | 'live' | 'reconnecting' | 'closed' | 'removed';

export interface BoardEvent {
  seq: number | null;
  type: string;
  actor: string;
  workId: string | null;
  at: string;
  data: Record<string, unknown>;
}

export interface Shout {
  id: string;
  from: string;
  text: string;
  kind: string;
  workId: string | null;
  to: string | null;
  at: string;
  deliveredAt?: string | null;
}

export interface FeedHandlers {
  event(e: BoardEvent): void;
  shout(s: Shout): void;
  /** The log no longer holds what was missed: reload the board. */
  resync(): void;
}

const RETRY_MS = [500, 1000, 2000, 5000, 10_000];

export class BoardFeed {
  readonly state = signal<FeedState>('connecting');
  /** This person's role on the board, as the server told the subscription. */
  readonly role = signal<string | null>(null);
  /** Why the board can no longer be watched (the person lost access), or null. */
  readonly ended = signal<string | null>(null);
  private socket: WebSocket | null = null;
  /** Set while subscribing again after the server unsubscribed the board: why it did. */
  private resubscribing: string | null = null;
  private attempts = 0;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly boardId: string,
    /** The last seq the page has: the feed resumes after it (null: from now on). */
    private lastSeq: number | null,
    private readonly on: FeedHandlers,
  ) {
    this.open();
  }

  get seq(): number | null {
    return this.lastSeq;
  }

  /** Drops the socket as a network would (the feed reconnects). */
  drop(): void {
    this.socket?.close();
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
    socket.send(JSON.stringify({ type: 'subscribe', boardId: this.boardId, topics: ['activity'], ...(this.lastSeq === null ? {} : { since: this.lastSeq }) }));
  }

  private message(m: Record<string, unknown>): void {
    if (m.type === 'unsubscribed' && m.boardId === this.boardId && this.socket) {
      this.resubscribing = typeof m.reason === 'string' ? m.reason : 'Your access to this board changed.';
      this.state.value = 'connecting';
      this.subscribe(this.socket);
    } else if (m.type === 'error' && this.resubscribing !== null) {
      this.ended.value = this.resubscribing.includes('no longer') ? this.resubscribing : ((m.error as { message?: string } | undefined)?.message ?? 'You can no longer watch this board.');
      this.role.value = null;
      this.stopped = true;
      this.socket?.close(1000, 'no access');
      this.state.value = 'removed';
    } else if (m.type === 'subscribed') {
      this.resubscribing = null;
      this.attempts = 0;
      if (typeof m.role === 'string') this.role.value = m.role;
      this.lastSeq ??= m.seq as number;
      this.state.value = 'live';
    } else if (m.type === 'event') {
      const seq = m.seq as number | null;
      if (seq !== null) {
        if (this.lastSeq !== null && seq <= this.lastSeq) return;
        this.lastSeq = seq;
      }
      this.on.event({ ...(m.event as Omit<BoardEvent, 'seq'>), seq });
    } else if (m.type === 'shout') {
      this.on.shout(m.shout as Shout);
    } else if (m.type === 'resync') {
      this.lastSeq = m.seq as number;
      this.on.resync();
    }
  }
}
