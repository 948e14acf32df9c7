// The client address behind proxies, as a table: who the peer is, what the headers say, what
// TRUSTED_PROXIES lists, and which address the request is then counted against.
import { describe, expect, it } from 'vitest';
import { parseProxyList, plainAddress } from '../../src/address-list.js';
import { clientAddress, type ForwardedHeader } from '../../src/http/trusted-proxies.js';

const at = (
  peer: string,
  headers: Record<string, string>,
  trusted: string,
  header: ForwardedHeader = 'x-forwarded-for',
) => clientAddress(peer, headers, parseProxyList(trusted), header);

describe('trusted proxies: the client address', () => {
  it.each([
    // [peer, headers, TRUSTED_PROXIES, header, client]
    [
      'spoofed X-Forwarded-For from an untrusted peer is ignored',
      '198.51.100.4',
      { 'x-forwarded-for': '1.2.3.4' },
      '10.0.0.0/8',
      'x-forwarded-for',
      '198.51.100.4',
    ],
    [
      'spoofed Forwarded from an untrusted peer is ignored',
      '198.51.100.4',
      { forwarded: 'for=1.2.3.4' },
      '10.0.0.0/8',
      'forwarded',
      '198.51.100.4',
    ],
    [
      'no proxy configured: headers ignored',
      '127.0.0.1',
      { 'x-forwarded-for': '1.2.3.4' },
      '',
      'x-forwarded-for',
      '127.0.0.1',
    ],
    [
      'one trusted proxy names the client',
      '10.0.0.2',
      { 'x-forwarded-for': '203.0.113.7' },
      '10.0.0.0/8',
      'x-forwarded-for',
      '203.0.113.7',
    ],
    [
      'what the client prepended is never reached',
      '10.0.0.2',
      { 'x-forwarded-for': '1.1.1.1, 203.0.113.7' },
      '10.0.0.0/8',
      'x-forwarded-for',
      '203.0.113.7',
    ],
    [
      'a chain of trusted proxies is skipped to the right-most untrusted hop',
      '10.0.0.3',
      { 'x-forwarded-for': '6.6.6.6, 203.0.113.7, 10.0.0.1, 192.168.5.5' },
      '10.0.0.0/8, 192.168.0.0/16',
      'x-forwarded-for',
      '203.0.113.7',
    ],
    [
      'a proxy in the chain not trusted is the client',
      '10.0.0.3',
      { 'x-forwarded-for': '203.0.113.7, 172.20.0.9' },
      '10.0.0.0/8',
      'x-forwarded-for',
      '172.20.0.9',
    ],
    [
      'every hop trusted: the left-most',
      '10.0.0.3',
      { 'x-forwarded-for': '10.0.0.1, 10.0.0.2' },
      '10.0.0.0/8',
      'x-forwarded-for',
      '10.0.0.1',
    ],
    ['a trusted peer without the header is the client', '10.0.0.3', {}, '10.0.0.0/8', 'x-forwarded-for', '10.0.0.3'],
    [
      'a hop that is not an address stops at the proxy that wrote it',
      '10.0.0.3',
      { 'x-forwarded-for': '203.0.113.7, unknown, 10.0.0.1' },
      '10.0.0.0/8',
      'x-forwarded-for',
      '10.0.0.1',
    ],
    [
      'IPv4 with a port',
      '10.0.0.3',
      { 'x-forwarded-for': '203.0.113.7:51234' },
      '10.0.0.0/8',
      'x-forwarded-for',
      '203.0.113.7',
    ],
    [
      'IPv6 client behind an IPv6 proxy',
      '0000:0000:0000:0000:0000:0000:0000:0001',
      { 'x-forwarded-for': '2001:DB8:1:2::5' },
      '::1',
      'x-forwarded-for',
      '2001:db8:1:2::5',
    ],
    [
      'IPv6 in brackets with a port',
      '::1',
      { 'x-forwarded-for': '[2001:db8::9]:4711' },
      'loopback',
      'x-forwarded-for',
      '2001:db8::9',
    ],
    [
      'IPv6 proxies by CIDR',
      'fd00::2',
      { 'x-forwarded-for': '2001:db8::9, fd00::1' },
      'fd00::/8',
      'x-forwarded-for',
      '2001:db8::9',
    ],
    [
      'an IPv4-mapped peer matches an IPv4 entry',
      '::ffff:10.0.0.2',
      { 'x-forwarded-for': '203.0.113.7' },
      '10.0.0.2',
      'x-forwarded-for',
      '203.0.113.7',
    ],
    [
      'Forwarded: quoted IPv6 with a port, several elements',
      '10.0.0.3',
      { forwarded: 'for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https, for=10.0.0.1;by=10.0.0.3' },
      '10.0.0.0/8',
      'forwarded',
      '2001:db8:cafe::17',
    ],
    [
      'Forwarded: an obfuscated hop stops at the proxy that wrote it',
      '10.0.0.3',
      { forwarded: 'for=203.0.113.7, for=_hidden' },
      '10.0.0.0/8',
      'forwarded',
      '10.0.0.3',
    ],
    [
      'with FORWARDED_HEADER=forwarded a client-sent X-Forwarded-For is ignored',
      '10.0.0.3',
      { 'x-forwarded-for': '1.2.3.4', forwarded: 'for=203.0.113.7' },
      '10.0.0.0/8',
      'forwarded',
      '203.0.113.7',
    ],
    [
      'with X-Forwarded-For a client-sent Forwarded is ignored',
      '10.0.0.3',
      { 'x-forwarded-for': '203.0.113.7', forwarded: 'for=1.2.3.4' },
      '10.0.0.0/8',
      'x-forwarded-for',
      '203.0.113.7',
    ],
  ] as const)('%s', (_, peer, headers, trusted, header, client) => {
    expect(at(peer, headers, trusted, header)).toBe(client);
  });

  it('stops reading after 32 hops: a longer list is no proxy chain', () => {
    const forged = Array.from({ length: 100 }, () => '10.0.0.1').join(', ');
    expect(at('10.0.0.3', { 'x-forwarded-for': `203.0.113.7, ${forged}` }, '10.0.0.0/8')).toBe('10.0.0.1');
  });

  it.each([['10.0.0.0/33'], ['10.0.0/8'], ['example.com'], ['::1/129'], ['1.2.3.4/8/9'], ['10.0.0.0/x']])(
    'refuses the entry %s',
    (entry) => {
      expect(() => parseProxyList(entry)).toThrow(new RegExp(`is not an address or CIDR range`));
    },
  );

  it('spells each address one way', () => {
    expect(plainAddress('0000:0000:0000:0000:0000:0000:0000:0001')).toBe('::1');
    expect(plainAddress('0000:0000:0000:0000:0000:ffff:7f00:0001')).toBe('127.0.0.1');
    expect(plainAddress('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(plainAddress('192.0.2.1')).toBe('192.0.2.1');
  });
});
