// The seals of the channel nodes forward board commands over (src/cluster/peer-channel.ts).
//
// A channel opens with a hello signed with the nodes' shared key (derived from SECRET_KEY),
// addressed from one node to one other, stamped and single-use: a captured hello can be neither
// replayed nor sent to another node, and anything else is answered as an unknown path. Every
// frame on the channel is then signed with a key of that channel alone (derived from the hello's
// nonce) and numbered in each direction: a frame replayed, reordered, altered or carried to
// another channel (another connection, another peer) does not open, and the channel is closed.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

export const HELLO_HEADER = 'x-board-peer';
/** A hello is accepted this long either side of its stamp (nodes' clocks must agree to within it). */
export const ENVELOPE_SKEW_MS = 30_000;

export interface Hello {
  from: string;
  to: string;
  /** When it was sealed, by the sender's clock. */
  at: number;
  nonce: string;
}

const mac = (key: Buffer, text: string): string => createHmac('sha256', key).update(text).digest('base64url');

/** The hello's header value: its body in base64url, a dot, the body's signature. */
export function sealHello(key: Buffer, hello: Omit<Hello, 'nonce'>): { header: string; nonce: string } {
  const nonce = randomUUID();
  const body = Buffer.from(JSON.stringify({ ...hello, nonce })).toString('base64url');
  return { header: `${body}.${mac(key, body)}`, nonce };
}

/** What signs one channel's frames: both ends derive it from the hello's nonce. */
export const channelKey = (key: Buffer, nonce: string): Buffer =>
  createHmac('sha256', key).update(`peer-channel:${nonce}`).digest();

/** The direction a frame travels: to the home (commands) or back (answers); each has its own numbering. */
export type Direction = 'to-home' | 'to-entry';

/** A frame: its number, a dot, its signature, a dot, the text. */
export function sealFrame(key: Buffer, direction: Direction, n: number, text: string): string {
  return `${n}.${mac(key, `${direction}.${n}.${text}`)}.${text}`;
}

/** The frame's text when it is the one numbered `n` in `direction` under `key`; else null. */
export function openFrame(key: Buffer, direction: Direction, n: number, frame: string): string | null {
  const first = frame.indexOf('.');
  const second = frame.indexOf('.', first + 1);
  if (first < 0 || second < 0 || frame.slice(0, first) !== String(n)) return null;
  const text = frame.slice(second + 1);
  return equal(frame.slice(first + 1, second), mac(key, `${direction}.${n}.${text}`)) ? text : null;
}

/** An entry of a frame: its JSON text, and its size in bytes (UTF-8, as it goes on the wire). */
export interface Entry {
  text: string;
  bytes: number;
}

export const entryOf = (value: unknown): Entry => {
  const text = JSON.stringify(value);
  return { text, bytes: Buffer.byteLength(text) };
};

/**
 * Packs entries, in order, into frames' texts (`[a,b,…]`): each list's entries and commas take at
 * most `limit` bytes, so its text at most `limit` + 2 (one longer entry goes alone).
 */
export function packFrames(entries: readonly Entry[], limit: number): string[] {
  const frames: string[] = [];
  let batch: string[] = [];
  let bytes = -1; // n entries take n - 1 commas
  for (const entry of entries) {
    if (batch.length > 0 && bytes + entry.bytes + 1 > limit) {
      frames.push(`[${batch.join(',')}]`);
      batch = [];
      bytes = -1;
    }
    batch.push(entry.text);
    bytes += entry.bytes + 1;
  }
  if (batch.length > 0) frames.push(`[${batch.join(',')}]`);
  return frames;
}

/**
 * One end of a channel: what it sends, a task's entries packed into frames signed and numbered in
 * its direction; what it receives, each frame in turn, opened and read as a JSON list. `entryLimit`:
 * the channel's bound on one entry, and so on a list's entries together (src/cluster/wire.ts).
 */
export class ChannelEnd {
  private sent = 0;
  private received = 0;

  constructor(
    private readonly key: Buffer,
    private readonly sends: Direction,
    private readonly entryLimit: number,
  ) {}

  seal(entries: readonly Entry[]): string[] {
    return packFrames(entries, this.entryLimit).map((text) => sealFrame(this.key, this.sends, ++this.sent, text));
  }

  /** The next frame's entries; null when it does not open or is not a JSON list. */
  open(frame: string): unknown[] | null {
    const text = openFrame(this.key, this.sends === 'to-home' ? 'to-entry' : 'to-home', ++this.received, frame);
    if (text === null) return null;
    try {
      const entries: unknown = JSON.parse(text);
      return Array.isArray(entries) ? entries : null;
    } catch {
      return null;
    }
  }
}

function equal(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function wellFormed(value: unknown): value is Hello {
  const h = value as Hello;
  return (
    typeof h === 'object' &&
    h !== null &&
    typeof h.from === 'string' &&
    typeof h.to === 'string' &&
    typeof h.at === 'number' &&
    typeof h.nonce === 'string'
  );
}

/** Opens hellos addressed to one node, each once. */
export class EnvelopeOpener {
  /** Nonces accepted in this period and the one before: together they outlast any stamp still accepted. */
  private current = new Set<string>();
  private previous = new Set<string>();
  private rotatedAt: number;

  constructor(
    private readonly key: Buffer,
    private readonly self: string,
    private readonly clock: () => number,
  ) {
    this.rotatedAt = clock();
  }

  /** The hello, or null when the signature, the addressee, the stamp or the nonce is wrong. */
  open(header: string | undefined): Hello | null {
    if (!header) return null;
    const dot = header.lastIndexOf('.');
    if (dot < 0) return null;
    const body = header.slice(0, dot);
    if (!equal(header.slice(dot + 1), mac(this.key, body))) return null;
    let hello: unknown;
    try {
      hello = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    if (!wellFormed(hello) || hello.to !== this.self) return null;
    const now = this.clock();
    if (Math.abs(now - hello.at) > ENVELOPE_SKEW_MS) return null;
    this.rotate(now);
    if (this.current.has(hello.nonce) || this.previous.has(hello.nonce)) return null;
    this.current.add(hello.nonce);
    return hello;
  }

  /**
   * A hello accepted at t has a stamp after t - SKEW, so it is refused by its stamp after
   * t + 2 SKEW at the latest; the two periods of 2 SKEW each keep its nonce at least that long.
   */
  private rotate(now: number): void {
    if (now - this.rotatedAt < 2 * ENVELOPE_SKEW_MS) return;
    this.previous = now - this.rotatedAt < 4 * ENVELOPE_SKEW_MS ? this.current : new Set();
    this.current = new Set();
    this.rotatedAt = now;
  }
}
