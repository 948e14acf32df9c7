import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/ratelimit/address-key.js';

describe('address budget keys', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['0000:0000:0000:0000:0000:ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:0000:0000:0000:0001', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', '0:0:0:0::/64'],
  ])('%s draws on %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });

  it('puts every address of one /64 on one budget and another /64 on its own', () => {
    const rotated = Array.from({ length: 50 }, (_, i) => `2001:db8:7:7:${i.toString(16)}::${(i * 7).toString(16)}`);
    expect(new Set(rotated.map(addressKey))).toEqual(new Set(['2001:db8:7:7::/64']));
    expect(addressKey('2001:db8:7:8::1')).not.toBe(addressKey('2001:db8:7:7::1'));
  });
});
