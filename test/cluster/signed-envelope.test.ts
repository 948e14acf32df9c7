// The peer channel's seals, without a server: which hellos open, for how long a nonce is
// remembered as the periods rotate, and which frames open on a channel.
import { describe, expect, it } from 'vitest';
import {
  ChannelEnd,
  channelKey,
  ENVELOPE_SKEW_MS,
  EnvelopeOpener,
  entryOf,
  openFrame,
  packFrames,
  sealFrame,
  sealHello,
} from '../../src/cluster/signed-envelope.js';

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
    const altered = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), from: 'mallory' }),
    ).toString('base64url');
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
    const entries = Array.from({ length: 10 }, (_, i) => entryOf([i, 'b', { n: 'x'.repeat(i * 10) }]));
    const frames = packFrames(entries, 118);
    expect(frames.length).toBeGreaterThan(1);
    expect(frames.flatMap((f) => JSON.parse(f) as unknown[])).toEqual(
      entries.map((e) => JSON.parse(e.text) as unknown),
    );
    for (const f of frames)
      if ((JSON.parse(f) as unknown[]).length > 1) expect(Buffer.byteLength(f)).toBeLessThanOrEqual(118 + 2);
    expect(packFrames([entryOf('y'.repeat(500))], 118)).toEqual([`[${JSON.stringify('y'.repeat(500))}]`]);
    expect(packFrames([], 118)).toEqual([]);
  });

  it('count an entry’s UTF-8 bytes, as the frame goes on the wire, not its UTF-16 units', () => {
    // 32 UTF-16 units each (three would fit 118 by that count), 92 bytes each: one a frame.
    const euros = Array.from({ length: 3 }, () => entryOf('€'.repeat(30)));
    expect(euros[0]!.bytes).toBe(92);
    const frames = packFrames(euros, 118);
    expect(frames).toHaveLength(3);
    for (const f of frames) expect(Buffer.byteLength(f)).toBeLessThanOrEqual(118 + 2);
    // Entries and commas exactly at the limit share a frame; one byte more does not.
    const ascii = (n: number) => entryOf('a'.repeat(n - 2)); // its text: n bytes with the quotes
    expect(packFrames([ascii(58), ascii(59)], 118)).toHaveLength(1);
    expect(packFrames([ascii(59), ascii(59)], 118)).toHaveLength(2);
  });

  it('seal a turn’s entries at one end within the channel’s bound, and open them in order at the other', () => {
    const channel = channelKey(key, sealHello(key, hello(0)).nonce);
    const entry = new ChannelEnd(channel, 'to-home', 200);
    const home = new ChannelEnd(channel, 'to-entry', 200);
    const entries = Array.from({ length: 12 }, (_, i) => entryOf([i, 'b1', { kind: 'expire', note: 'é'.repeat(40) }]));
    const frames = entry.seal(entries);
    expect(frames.length).toBeGreaterThan(1);
    for (const f of frames)
      expect(Buffer.byteLength(openFrame(channel, 'to-home', frames.indexOf(f) + 1, f)!)).toBeLessThanOrEqual(200 + 2);
    expect(frames.flatMap((f) => home.open(f)!)).toEqual(entries.map((e) => JSON.parse(e.text) as unknown));
  });
});
