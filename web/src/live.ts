// A board's live feed over /api/ws: subscribes from the last seq it saw, so a drop resumes with
// nothing missed; an event at or below that seq is never passed on twice.
import { signal } from '@preact/signals';

export type FeedState = 'connecting' | 'live' | 'reconnecting' | 'closed';

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
  private socket: WebSocket | null = null;
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
    socket.onopen = () => socket.send(JSON.stringify({ type: 'subscribe', boardId: this.boardId, topics: ['activity'], ...(this.lastSeq === null ? {} : { since: this.lastSeq }) }));
    socket.onmessage = (m) => this.message(JSON.parse(String(m.data)) as Record<string, unknown>);
    socket.onclose = () => {
      if (this.socket !== socket || this.stopped) return;
      this.state.value = 'reconnecting';
      this.timer = setTimeout(() => this.open(), RETRY_MS[Math.min(this.attempts++, RETRY_MS.length - 1)]);
    };
  }

  private message(m: Record<string, unknown>): void {
    if (m.type === 'subscribed') {
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
