// The client's address behind reverse proxies. Only a peer listed in TRUSTED_PROXIES may name the
// client, in the one header the operator's proxies write (X-Forwarded-For or Forwarded); a client
// can put anything in either, so from any other peer both are ignored. Each proxy appends the
// address it received the request from, so the list is read from the right: trusted hops are
// skipped and the first untrusted one is the client (what a client wrote further left is never
// reached). Per-address budgets and anything else reading ctx.remoteAddress see this address.
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

/** Hops read at most from the right: a longer chain than this is not a proxy chain. */
const MAX_HOPS = 32;

export type ForwardedHeader = 'x-forwarded-for' | 'forwarded';

/** The client's address for a request that arrived from `peer` (the socket's address). */
export function clientAddress(
  peer: string,
  headers: Record<string, string>,
  proxies: ProxyList,
  header: ForwardedHeader,
): string {
  const direct = plainAddress(peer);
  if (!proxies.trusts(direct)) return direct;
  const value = headers[header];
  if (!value) return direct;
  const hops = header === 'forwarded' ? forwardedFor(value) : value.split(',');
  let nearest = direct;
  for (let i = hops.length - 1; i >= 0 && i >= hops.length - MAX_HOPS; i--) {
    const hop = hopAddress(hops[i]!);
    // Not an address ("unknown", an obfuscated name): the trusted proxy that wrote it is as near
    // to the client as is known.
    if (hop === null) return nearest;
    if (!proxies.trusts(hop)) return hop;
    nearest = hop;
  }
  return nearest;
}

/** One hop as written: 203.0.113.7, 203.0.113.7:4711, 2001:db8::1, [2001:db8::1]:4711, quoted or not. */
function hopAddress(raw: string): string | null {
  let hop = raw.trim();
  if (hop.startsWith('"') && hop.endsWith('"') && hop.length >= 2) hop = hop.slice(1, -1);
  if (hop.startsWith('[')) hop = hop.slice(1, hop.includes(']') ? hop.indexOf(']') : undefined);
  else if (hop.indexOf(':') === hop.lastIndexOf(':') && hop.includes('.')) hop = hop.split(':')[0]!;
  return isIP(hop) ? plainAddress(hop) : null;
}

/** The for= values of a Forwarded header (RFC 7239), in order; an element without one counts as unknown. */
function forwardedFor(value: string): string[] {
  const hops: string[] = [];
  for (const element of splitOutsideQuotes(value, ',')) {
    const pair = splitOutsideQuotes(element, ';')
      .map((p) => p.trim())
      .find((p) => /^for\s*=/i.test(p));
    hops.push(pair ? pair.slice(pair.indexOf('=') + 1).trim() : 'unknown');
  }
  return hops;
}

function splitOutsideQuotes(value: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '"' && value[i - 1] !== '\\') quoted = !quoted;
    else if (c === separator && !quoted) {
      parts.push(value.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(value.slice(start));
  return parts;
}
