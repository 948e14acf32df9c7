// Which budget a socket address draws on: an IPv4 address alone, an IPv6 address by its /64 (one
// host usually holds a whole /64, so counting single IPv6 addresses would let it rotate through
// them without limit). IPv4-mapped IPv6 addresses count as their IPv4 address.
import { isIPv4, isIPv6 } from 'node:net';

/** The 8 hextets of an IPv6 address, expanded. */
function hextets(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const part = (s: string) => (s ? s.split(':') : []);
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const zeros = Array.from({ length: 8 - left.length - right.length }, () => '0');
  return [...left, ...(tail === undefined ? [] : zeros), ...right].map((h) => h.toLowerCase().replace(/^0+(?=.)/, ''));
}

export function addressKey(address: string): string {
  const mapped = /^[0:]*:ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (!isIPv6(address) || address.includes('.')) return address;
  return `${hextets(address).slice(0, 4).join(':')}::/64`;
}
