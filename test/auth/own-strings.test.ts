// ownStrings (src/auth/own-strings.ts): a record kept long (the identity cache, a socket's origin)
// is copied with strings of its own; what it says is unchanged, and what is not a plain record or
// a string (a Date, bytes) is kept as it is.
import { describe, expect, it } from 'vitest';
import { ownStrings } from '../../src/auth/own-strings.js';

describe('ownStrings', () => {
  it('copies plain records and arrays, every level, and says the same', () => {
    const decoded = 'x'.repeat(200) + 'agb_live_token_prefix' + 'y'.repeat(200);
    const record = {
      prefix: decoded.slice(200, 221),
      short: decoded.slice(0, 3),
      role: 'member',
      resources: [{ kind: 'item', id: decoded.slice(190, 230) }],
      count: 3,
      revoked: false,
      boardId: null,
      nested: { deeper: { name: decoded.slice(221, 260) } },
    };
    const own = ownStrings(record);
    expect(own).toEqual(record);
    expect(own).not.toBe(record);
    expect(own.resources).not.toBe(record.resources);
    expect(own.resources[0]).not.toBe(record.resources[0]);
    expect(own.nested.deeper).not.toBe(record.nested.deeper);
    expect(own.prefix).toBe('agb_live_token_prefix');
  });

  it('keeps what is not a plain record as it is', () => {
    const at = new Date(1_800_000_000_000);
    const bytes = Buffer.from('abc');
    class Shaped {
      constructor(readonly name: string) {}
    }
    const shaped = new Shaped('kept');
    const own = ownStrings({ at, bytes, shaped, none: undefined });
    expect(own.at).toBe(at);
    expect(own.bytes).toBe(bytes);
    expect(own.shaped).toBe(shaped);
    expect('none' in own && own.none === undefined).toBe(true);
  });

  it('gives strings, numbers, booleans and null back as they are', () => {
    expect(ownStrings('a long string made of a longer one'.slice(2))).toBe('long string made of a longer one');
    expect(ownStrings(42)).toBe(42);
    expect(ownStrings(true)).toBe(true);
    expect(ownStrings(null)).toBeNull();
  });
});
