// The peer channel's seals, without a server: which hellos open, for how long a nonce is
// remembered as the periods rotate, and which frames open on a channel.
import { describe, expect, it } from 'vitest';
import { channelKey, ENVELOPE_SKEW_MS, EnvelopeOpener, openFrame, packFrames, sealFrame, sealHello } from '../../src/cluster/signed-envelope.js';

const key = Buffer.alloc(32, 7);
const hello = (at: number, to = 'home') => ({ from: 'entry', to, at });

describe('signed hellos', () => {
  it('opens a sealed hello once, addressed to its node, within the skew of its stamp', () => {
    let now = 1_000_000;
    const opener = new EnvelopeOpener(key, 'home', () => now);
    const good = sealHello(key, hello(now));
    expect(opener.open(good.header)).toMatchObject({ from: 'entry', to: 'home', nonce: good.nonce });
    expect(opener.open(good.header)).toBeNull();
    expect(opener.open(sealHello(key, hello(now, 'other')).header)).toBeNull();
    expect(opener.open(sealHello(key, hello(now + ENVELOPE_SKEW_MS + 1)).header)).toBeNull();
    now += 10;
    expect(opener.open(sealHello(key, hello(now - ENVELOPE_SKEW_MS - 1)).header)).toBeNull();
    const fresh = sealHello(key, hello(now));
    const [body, signature] = fresh.header.split('.') as [string, string];
    expect(opener.open(undefined)).toBeNull();
    expect(opener.open(body)).toBeNull();
    expect(opener.open(`${body}.${signature.slice(1)}`)).toBeNull();
    expect(opener.open(`${body}.${sealHello(Buffer.alloc(32, 8), hello(now)).header.split('.')[1]}`)).toBeNull();
    const altered = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), from: 'mallory' })).toString('base64url');
    expect(opener.open(`${altered}.${signature}`)).toBeNull();
    expect(opener.open(fresh.header)).not.toBeNull();
  });

  it('remembers a nonce until its stamp is refused anyway, across rotations, with the stamp at either end of the skew', () => {
    for (const offset of [-ENVELOPE_SKEW_MS, 0, ENVELOPE_SKEW_MS]) {
      let now = 5_000_000;
      const opener = new EnvelopeOpener(key, 'home', () => now);
      const sealed = sealHello(key, hello(now + offset));
      expect(opener.open(sealed.header)).not.toBeNull();
      // Replayed every second until the stamp is out of the skew: never opens again.
      for (let t = 1000; now + 1000 - (5_000_000 + offset) <= ENVELOPE_SKEW_MS; t += 1000) {
        now = 5_000_000 + t;
        // Other traffic keeps the periods rotating.
        expect(opener.open(sealHello(key, hello(now)).header)).not.toBeNull();
        expect(opener.open(sealed.header)).toBeNull();
      }
    }
  });
});

describe('channel frames', () => {
  const nonce = sealHello(key, hello(0)).nonce;
  const mine = channelKey(key, nonce);

  it('open with their channel’s key, in their direction, at their number, unaltered', () => {
    const frame = sealFrame(mine, 'to-home', 3, '[[1,"b1",{"kind":"expire"}]]');
    expect(openFrame(mine, 'to-home', 3, frame)).toBe('[[1,"b1",{"kind":"expire"}]]');
    expect(openFrame(mine, 'to-home', 4, frame)).toBeNull(); // replayed later on the same channel
    expect(openFrame(mine, 'to-home', 2, frame)).toBeNull();
    expect(openFrame(mine, 'to-entry', 3, frame)).toBeNull(); // reflected back to its sender
    expect(openFrame(channelKey(key, sealHello(key, hello(0)).nonce), 'to-home', 3, frame)).toBeNull(); // carried to another channel
    expect(openFrame(channelKey(Buffer.alloc(32, 8), nonce), 'to-home', 3, frame)).toBeNull(); // another key
    expect(openFrame(mine, 'to-home', 3, frame.replace('expire', 'expirE'))).toBeNull();
    expect(openFrame(mine, 'to-home', 3, frame.replace(/^3\./, '4.'))).toBeNull();
    expect(openFrame(mine, 'to-home', 3, 'garbage')).toBeNull();
    expect(openFrame(mine, 'to-home', 3, '3..')).toBeNull();
  });

  it('pack a turn’s entries into JSON arrays under the limit, each entry whole and in order', () => {
    const entries = Array.from({ length: 10 }, (_, i) => JSON.stringify([i, 'b', { n: 'x'.repeat(i * 10) }]));
    const frames = packFrames(entries, 120);
    expect(frames.length).toBeGreaterThan(1);
    expect(frames.flatMap((f) => JSON.parse(f) as unknown[])).toEqual(entries.map((e) => JSON.parse(e) as unknown));
    for (const f of frames) if ((JSON.parse(f) as unknown[]).length > 1) expect(f.length).toBeLessThanOrEqual(120);
    expect(packFrames([JSON.stringify('y'.repeat(500))], 120)).toEqual([`[${JSON.stringify('y'.repeat(500))}]`]);
    expect(packFrames([])).toEqual([]);
  });
});
