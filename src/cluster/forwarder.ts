// The entry node's side of forwarding: one WebSocket channel per peer, opened with a signed hello,
// carrying many board commands at once. Commands sent in one task (a request's handler, a timer)
// go out in one signed frame as its microtasks drain, and the home answers in frames of its own.
// Not at the end of the loop's turn: a frame held that long waited behind every other callback of
// the turn on both nodes, and the home's group commits shrank as its agents spent longer in
// transit (bench/board-homes.ts, two boards on two nodes: 0.40 commits a cycle, not 0.31). What
// came of a command is told apart by whether the home can have decided it: one never written to
// an open channel may go again; one whose answer was lost may have been committed, so the caller
// gets 503 BOARD_BUSY, as for any lost response. No frame either way is larger than the largest
// command or answer needs (src/cluster/wire.ts): a larger one closes the channel. A home gone
// without a word (a host lost, a path cut) is found by its missing pongs: the channel ends, its
// commands are told as above, and the next command opens a new one rather than waiting out its
// time on a dead one.
import WebSocket from 'ws';
import type { BoardCommand } from '../board/commands.js';
import { BODY_LIMIT_BYTES } from '../config.js';
import { ChannelEnd, channelKey, entryOf, HELLO_HEADER, sealHello, type Entry } from './signed-envelope.js';
import type { NodeAddress } from './homes.js';
import { largestEntryBytes, peerFrameBytes, type Answer } from './wire.js';

export const PEER_PATH = '/internal/peer';

/** How often an entry pings each home; a home that answered nothing since the last ping is gone. */
export const PEER_HEARTBEAT_MS = 15_000;

/** How large the frames of a node's channels can be, from its body limit (BODY_LIMIT_BYTES): one entry, and one frame. */
export interface FrameBounds {
  entry: number;
  frame: number;
}

export const frameBounds = (bodyLimitBytes: number): FrameBounds => ({
  entry: largestEntryBytes(bodyLimitBytes),
  frame: peerFrameBytes(bodyLimitBytes),
});

export type Forwarded =
  /** The home answered (a reply, a refusal, or moved). */
  | { outcome: 'answered'; answer: Exclude<Answer, { retry: true } | { tooLarge: true }> }
  /** It never reached a node that could decide it (no channel, a draining node): it may go again. */
  | { outcome: 'unreachable' }
  /** It may have been decided, and the answer is lost (the home died or timed out). */
  | { outcome: 'unknown' };

/** What came of a command whose answer will not come: decided perhaps, once written; else free to go again. */
const unanswered = (w: Waiting): Forwarded => ({ outcome: w.sent ? 'unknown' : 'unreachable' });

interface Waiting {
  resolve: (forwarded: Forwarded) => void;
  timer: NodeJS.Timeout;
  /** Written to the open channel: from then on, its answer lost means it may have been decided. */
  sent: boolean;
}

/** One channel to one peer, for as long as its connection lasts. */
class Channel {
  private readonly ws: WebSocket;
  private readonly frames: ChannelEnd;
  private open = false;
  private ended = false;
  private nextId = 1;
  /** Commands waiting for the end of this task (or for the channel to open), encoded. */
  private queued: (Entry & { id: number })[] = [];
  private readonly waiting = new Map<number, Waiting>();
  /** Something (a pong, an answer) came from the home since the last ping. */
  private heard = true;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    forwardKey: Buffer,
    self: string,
    to: NodeAddress,
    at: number,
    private readonly bounds: FrameBounds,
    heartbeatMs: number,
    private readonly gone: (channel: Channel) => void,
  ) {
    const hello = sealHello(forwardKey, { from: self, to: to.node, at });
    this.frames = new ChannelEnd(channelKey(forwardKey, hello.nonce), 'to-home', bounds.entry);
    this.ws = new WebSocket(`${to.url.replace(/^http/, 'ws')}${PEER_PATH}`, {
      headers: { [HELLO_HEADER]: hello.header },
      perMessageDeflate: false,
      maxPayload: bounds.frame,
      handshakeTimeout: 5000,
    });
    this.ws.on('open', () => {
      this.open = true;
      this.heartbeat = setInterval(() => this.beat(), heartbeatMs).unref();
      this.flush();
    });
    this.ws.on('pong', () => (this.heard = true));
    this.ws.on('message', (data) => {
      this.heard = true;
      this.answered(data.toString());
    });
    this.ws.on('error', () => this.end()); // 'close' follows, but a failed handshake may not say so
    this.ws.on('close', () => this.end());
  }

  send(boardId: string, command: BoardCommand, timeoutMs: number): Promise<Forwarded> {
    if (this.ended) return Promise.resolve({ outcome: 'unreachable' });
    const id = this.nextId++;
    const entry = entryOf([id, boardId, command]);
    // Larger than any command a route makes (a peer with a larger body limit?): never written, as it would end the channel.
    if (entry.bytes > this.bounds.entry) return Promise.resolve({ outcome: 'unreachable' });
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.timedOut(id), Math.max(1, timeoutMs));
      this.waiting.set(id, { resolve, timer, sent: false });
      if (this.queued.push({ id, ...entry }) === 1 && this.open) queueMicrotask(() => this.flush());
    });
  }

  close(): void {
    this.ws.terminate();
    this.end();
  }

  /** Ends a channel whose home answered nothing since the last ping; else pings it again. */
  private beat(): void {
    if (!this.heard) return this.close();
    this.heard = false;
    this.ws.ping();
  }

  /** Writes what waits, in signed frames. */
  private flush(): void {
    if (!this.open || this.ended || this.queued.length === 0) return;
    // The home began to close (its close frame came, the connection's end has not): ws would drop what is sent now.
    if (this.ws.readyState !== WebSocket.OPEN) return this.end();
    const out = this.queued;
    this.queued = [];
    for (const { id } of out) {
      const w = this.waiting.get(id);
      if (w) w.sent = true;
    }
    for (const frame of this.frames.seal(out)) this.ws.send(frame);
  }

  private answered(frame: string): void {
    const answers = this.frames.open(frame);
    if (!answers) return this.close(); // not our peer's frame: nothing more on this channel is believed
    for (const pair of answers as [number, Answer][]) {
      if (!Array.isArray(pair) || typeof pair[1] !== 'object' || pair[1] === null) continue;
      const [id, answer] = pair;
      this.settle(
        id,
        'retry' in answer
          ? { outcome: 'unreachable' }
          : 'tooLarge' in answer
            ? { outcome: 'unknown' }
            : { outcome: 'answered', answer },
      );
    }
  }

  private timedOut(id: number): void {
    const w = this.waiting.get(id);
    if (!w) return;
    // A command still queued is taken back: it will not be written after its caller gave up.
    if (!w.sent) this.queued = this.queued.filter((q) => q.id !== id);
    this.settle(id, unanswered(w));
  }

  private settle(id: number, forwarded: Forwarded): void {
    const w = this.waiting.get(id);
    if (!w) return; // timed out meanwhile
    this.waiting.delete(id);
    clearTimeout(w.timer);
    w.resolve(forwarded);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.queued = [];
    this.gone(this);
    for (const [id, w] of this.waiting) this.settle(id, unanswered(w));
  }
}

export class Forwarder {
  /** The channel to each peer, by node id and address. */
  private readonly channels = new Map<string, Channel>();
  private closed = false;
  private readonly bounds: FrameBounds;

  /**
   * `bodyLimitBytes`: the node's BODY_LIMIT_BYTES, which the peers share; it bounds the frames either
   * way. `heartbeatMs`: how often each home is pinged (a test's shorter).
   */
  constructor(
    private readonly key: Buffer,
    private readonly self: string,
    private readonly clock: () => number,
    bodyLimitBytes = BODY_LIMIT_BYTES,
    private readonly heartbeatMs = PEER_HEARTBEAT_MS,
  ) {
    this.bounds = frameBounds(bodyLimitBytes);
  }

  send(to: NodeAddress, boardId: string, command: BoardCommand, timeoutMs: number): Promise<Forwarded> {
    if (this.closed) return Promise.resolve({ outcome: 'unreachable' });
    const name = `${to.node} ${to.url}`;
    let channel = this.channels.get(name);
    if (!channel) {
      const made = new Channel(
        this.key,
        this.self,
        to,
        this.clock(),
        this.bounds,
        this.heartbeatMs,
        (c) => this.channels.get(name) === c && this.channels.delete(name),
      );
      this.channels.set(name, made);
      channel = made;
    }
    return channel.send(boardId, command, timeoutMs);
  }

  close(): void {
    this.closed = true;
    for (const channel of [...this.channels.values()]) channel.close();
    this.channels.clear();
  }
}
