// A forwarded board command's envelope: signed with the nodes' shared key (derived from
// SECRET_KEY), addressed from one node to one other, stamped and single-use. A captured envelope
// can be neither replayed nor sent to another node; anything else answers as an unknown path.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { isBoardCommand, type BoardCommand } from '../board/commands.js';

export const SIGNATURE_HEADER = 'x-board-signature';
/** An envelope is accepted this long either side of its stamp (nodes' clocks must agree to within it). */
export const ENVELOPE_SKEW_MS = 30_000;

export interface Envelope {
  from: string;
  to: string;
  /** When it was sealed, by the sender's clock. */
  at: number;
  nonce: string;
  boardId: string;
  command: BoardCommand;
}

const sign = (key: Buffer, body: string | Buffer): string => createHmac('sha256', key).update(body).digest('base64url');

export function seal(key: Buffer, envelope: Omit<Envelope, 'nonce'>): { body: string; signature: string } {
  const body = JSON.stringify({ ...envelope, nonce: randomUUID() });
  return { body, signature: sign(key, body) };
}

function wellFormed(value: unknown): value is Envelope {
  const e = value as Envelope;
  return typeof e === 'object' && e !== null && typeof e.from === 'string' && typeof e.to === 'string' && typeof e.at === 'number' && typeof e.nonce === 'string' && typeof e.boardId === 'string' && isBoardCommand(e.command);
}

/** Opens envelopes addressed to one node, each once. */
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

  /** The envelope, or null when the signature, the addressee, the stamp or the nonce is wrong. */
  open(body: Buffer, signature: string | undefined): Envelope | null {
    if (!signature) return null;
    const expected = Buffer.from(sign(this.key, body));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let envelope: unknown;
    try {
      envelope = JSON.parse(body.toString('utf8'));
    } catch {
      return null;
    }
    if (!wellFormed(envelope) || envelope.to !== this.self) return null;
    const now = this.clock();
    if (Math.abs(now - envelope.at) > ENVELOPE_SKEW_MS) return null;
    this.rotate(now);
    if (this.current.has(envelope.nonce) || this.previous.has(envelope.nonce)) return null;
    this.current.add(envelope.nonce);
    return envelope;
  }

  /**
   * An envelope accepted at t has a stamp after t - SKEW, so it is refused by its stamp after
   * t + 2 SKEW at the latest; the two periods of 2 SKEW each keep its nonce at least that long.
   */
  private rotate(now: number): void {
    if (now - this.rotatedAt < 2 * ENVELOPE_SKEW_MS) return;
    this.previous = now - this.rotatedAt < 4 * ENVELOPE_SKEW_MS ? this.current : new Set();
    this.current = new Set();
    this.rotatedAt = now;
  }
}
