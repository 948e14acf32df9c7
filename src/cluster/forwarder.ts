// The entry node's side of forwarding: one WebSocket channel per peer, opened with a signed hello,
// carrying many board commands at once. Commands sent during one turn of the event loop go out
// in one signed frame, and the home answers in frames of its own. What came of a command is told
// apart by whether the home can have decided it: one never written to an open channel may go
// again; one whose answer was lost may have been committed, so the caller gets 503 BOARD_BUSY,
// as for any lost response.
import WebSocket from 'ws';
import type { BoardCommand } from '../board/commands.js';
import { channelKey, HELLO_HEADER, openFrame, sealFrame, sealHello } from './signed-envelope.js';
import type { NodeAddress } from './homes.js';
import type { Answer } from './wire.js';

export const PEER_PATH = '/internal/peer';
/** A frame's text at most (both ways): a turn's commands or answers beyond it go in further frames. */
export const FRAME_TEXT_BYTES = 8 * 1024 * 1024;
/** What a channel accepts in one message: a frame, with room for one command or answer larger than FRAME_TEXT_BYTES. */
export const PEER_MAX_PAYLOAD = 64 * 1024 * 1024;

export type Forwarded =
  /** The home answered (a reply, a refusal, or moved). */
  | { outcome: 'answered'; answer: Exclude<Answer, { retry: true }> }
  /** It never reached a node that could decide it (no channel, a draining node): it may go again. */
  | { outcome: 'unreachable' }
  /** It may have been decided, and the answer is lost (the home died or timed out). */
  | { outcome: 'unknown' };

/**
 * Packs JSON texts into frames' texts (`[a,b,…]`) of at most `limit` bytes each (one longer text
 * goes alone). Each command or answer is encoded once.
 */
export function packFrames(entries: readonly string[], limit = FRAME_TEXT_BYTES): string[] {
  const frames: string[] = [];
  let batch: string[] = [];
  let bytes = 0;
  for (const entry of entries) {
    if (batch.length > 0 && bytes + entry.length + 1 > limit) {
      frames.push(`[${batch.join(',')}]`);
      batch = [];
      bytes = 0;
    }
    batch.push(entry);
    bytes += entry.length + 1; // UTF-16 length: a bound on frames, not an exact byte count
  }
  if (batch.length > 0) frames.push(`[${batch.join(',')}]`);
  return frames;
}

interface Waiting {
  resolve: (forwarded: Forwarded) => void;
  timer: NodeJS.Timeout;
  /** Written to the open channel: from then on, its answer lost means it may have been decided. */
  sent: boolean;
}

/** One channel to one peer, for as long as its connection lasts. */
class Channel {
  private readonly ws: WebSocket;
  private readonly key: Buffer;
  private open = false;
  private ended = false;
  private framesSent = 0;
  private framesReceived = 0;
  private nextId = 1;
  /** Commands waiting for the end of this turn (or for the channel to open), encoded. */
  private queued: { id: number; entry: string }[] = [];
  private readonly waiting = new Map<number, Waiting>();

  constructor(
    forwardKey: Buffer,
    self: string,
    to: NodeAddress,
    at: number,
    private readonly gone: (channel: Channel) => void,
  ) {
    const hello = sealHello(forwardKey, { from: self, to: to.node, at });
    this.key = channelKey(forwardKey, hello.nonce);
    this.ws = new WebSocket(`${to.url.replace(/^http/, 'ws')}${PEER_PATH}`, { headers: { [HELLO_HEADER]: hello.header }, perMessageDeflate: false, maxPayload: PEER_MAX_PAYLOAD, handshakeTimeout: 5000 });
    this.ws.on('open', () => {
      this.open = true;
      this.flush();
    });
    this.ws.on('message', (data) => this.answered(data.toString()));
    this.ws.on('error', () => this.end()); // 'close' follows, but a failed handshake may not say so
    this.ws.on('close', () => this.end());
  }

  send(boardId: string, command: BoardCommand, timeoutMs: number): Promise<Forwarded> {
    if (this.ended) return Promise.resolve({ outcome: 'unreachable' });
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.timedOut(id), Math.max(1, timeoutMs));
      this.waiting.set(id, { resolve, timer, sent: false });
      if (this.queued.push({ id, entry: JSON.stringify([id, boardId, command]) }) === 1 && this.open) setImmediate(() => this.flush());
    });
  }

  close(): void {
    this.ws.terminate();
    this.end();
  }

  /** Writes what waits, in signed frames. */
  private flush(): void {
    if (!this.open || this.ended || this.queued.length === 0) return;
    const out = this.queued;
    this.queued = [];
    for (const { id } of out) {
      const w = this.waiting.get(id);
      if (w) w.sent = true;
    }
    for (const text of packFrames(out.map((q) => q.entry))) this.ws.send(sealFrame(this.key, 'to-home', ++this.framesSent, text));
  }

  private answered(frame: string): void {
    const text = openFrame(this.key, 'to-entry', ++this.framesReceived, frame);
    let answers: unknown;
    try {
      answers = text === null ? null : JSON.parse(text);
    } catch {
      answers = null;
    }
    if (!Array.isArray(answers)) return this.close(); // not our peer's frame: nothing more on this channel is believed
    for (const pair of answers as [number, Answer][]) {
      if (!Array.isArray(pair) || typeof pair[1] !== 'object' || pair[1] === null) continue;
      const [id, answer] = pair;
      this.settle(id, 'retry' in answer ? { outcome: 'unreachable' } : { outcome: 'answered', answer });
    }
  }

  private timedOut(id: number): void {
    const w = this.waiting.get(id);
    if (!w) return;
    // A command still queued is taken back: it will not be written after its caller gave up.
    if (!w.sent) this.queued = this.queued.filter((q) => q.id !== id);
    this.settle(id, { outcome: w.sent ? 'unknown' : 'unreachable' });
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
    this.queued = [];
    this.gone(this);
    for (const [id, w] of this.waiting) this.settle(id, { outcome: w.sent ? 'unknown' : 'unreachable' });
  }
}

export class Forwarder {
  /** The channel to each peer, by node id and address. */
  private readonly channels = new Map<string, Channel>();
  private closed = false;

  constructor(
    private readonly key: Buffer,
    private readonly self: string,
    private readonly clock: () => number,
  ) {}

  send(to: NodeAddress, boardId: string, command: BoardCommand, timeoutMs: number): Promise<Forwarded> {
    if (this.closed) return Promise.resolve({ outcome: 'unreachable' });
    const name = `${to.node} ${to.url}`;
    let channel = this.channels.get(name);
    if (!channel) {
      const made = new Channel(this.key, this.self, to, this.clock(), (c) => this.channels.get(name) === c && this.channels.delete(name));
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
