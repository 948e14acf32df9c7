// The forwarded command's seal, without a server: what opens, what does not, and for how long a
// nonce is remembered as the periods rotate.
import { describe, expect, it } from 'vitest';
import { EnvelopeOpener, ENVELOPE_SKEW_MS, seal } from '../../src/cluster/signed-envelope.js';

const key = Buffer.alloc(32, 7);
const command = { kind: 'expire' } as const;
const envelope = (at: number, to = 'home') => ({ from: 'entry', to, at, boardId: 'b1', command });

describe('signed envelopes', () => {
  it('opens a sealed envelope once, addressed to its node, within the skew of its stamp', () => {
    let now = 1_000_000;
    const opener = new EnvelopeOpener(key, 'home', () => now);
    const good = seal(key, envelope(now));
    expect(opener.open(Buffer.from(good.body), good.signature)).toMatchObject({ from: 'entry', to: 'home', boardId: 'b1', command });
    expect(opener.open(Buffer.from(good.body), good.signature)).toBeNull();
    const elsewhere = seal(key, envelope(now, 'other'));
    expect(opener.open(Buffer.from(elsewhere.body), elsewhere.signature)).toBeNull();
    const early = seal(key, envelope(now + ENVELOPE_SKEW_MS + 1));
    expect(opener.open(Buffer.from(early.body), early.signature)).toBeNull();
    now += 10;
    const late = seal(key, envelope(now - ENVELOPE_SKEW_MS - 1));
    expect(opener.open(Buffer.from(late.body), late.signature)).toBeNull();
    const fresh = seal(key, envelope(now));
    expect(opener.open(Buffer.from(fresh.body), undefined)).toBeNull();
    expect(opener.open(Buffer.from(fresh.body), fresh.signature.slice(1))).toBeNull();
    expect(opener.open(Buffer.from(fresh.body), seal(Buffer.alloc(32, 8), envelope(now)).signature)).toBeNull();
    expect(opener.open(Buffer.from(fresh.body.replace('"b1"', '"b2"')), fresh.signature)).toBeNull();
    expect(opener.open(Buffer.from(fresh.body), fresh.signature)).not.toBeNull();
  });

  it('remembers a nonce until its stamp is refused anyway, across rotations, with the stamp at either end of the skew', () => {
    for (const offset of [-ENVELOPE_SKEW_MS, 0, ENVELOPE_SKEW_MS]) {
      let now = 5_000_000;
      const opener = new EnvelopeOpener(key, 'home', () => now);
      const sealed = seal(key, envelope(now + offset));
      expect(opener.open(Buffer.from(sealed.body), sealed.signature)).not.toBeNull();
      // Replayed every second until the stamp is out of the skew: never opens again.
      for (let t = 1000; now + 1000 - (5_000_000 + offset) <= ENVELOPE_SKEW_MS; t += 1000) {
        now = 5_000_000 + t;
        // Other traffic keeps the periods rotating.
        const other = seal(key, envelope(now));
        expect(opener.open(Buffer.from(other.body), other.signature)).not.toBeNull();
        expect(opener.open(Buffer.from(sealed.body), sealed.signature)).toBeNull();
      }
    }
  });
});
