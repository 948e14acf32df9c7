// Address lists as TRUSTED_PROXIES and the operators' allowlist write them ("10.0.0.0/8, fd00::/8,
// loopback"), and one spelling per address. Configuration, the allowlist and the http layer all read
// them, so they live below all three.
import { BlockList, isIP } from 'node:net';

export interface ProxyList {
  /** The entries as configured, for the start log. */
  readonly entries: readonly string[];
  trusts(address: string): boolean;
}

/** Names an operator may use for common ranges (a container network is usually private). */
const NAMED: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** Parses TRUSTED_PROXIES ("10.0.0.0/8, 192.168.1.5, fd00::/8, loopback"); throws naming a bad entry. */
export function parseProxyList(value: string): ProxyList {
  const list = new BlockList();
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries.flatMap((e) => NAMED[e.toLowerCase()] ?? [e])) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (
      !family ||
      extra !== undefined ||
      !Number.isInteger(prefix) ||
      prefix < 0 ||
      prefix > (family === 6 ? 128 : 32) ||
      (bits !== undefined && !/^\d+$/.test(bits))
    ) {
      throw new Error(`${entry.slice(0, 60)} is not an address or CIDR range (e.g. 10.0.0.0/8, fd00::/8)`);
    }
    list.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return {
    entries,
    trusts: (address) => entries.length > 0 && list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4'),
  };
}

/**
 * One spelling per address: IPv6 compressed and lower-case (uWebSockets.js gives all 8 hextets),
 * and an IPv4 client reached over an IPv6 socket (::ffff:a.b.c.d) as its IPv4 address.
 */
export function plainAddress(address: string): string {
  if (!address.includes(':')) return address;
  let host: string;
  try {
    host = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address.toLowerCase();
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (!mapped) return host;
  const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}
