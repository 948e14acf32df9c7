// The client's address behind reverse proxies. Only a peer listed in TRUSTED_PROXIES may name the
// client, in the one header the operator's proxies write (X-Forwarded-For or Forwarded); a client
// can put anything in either, so from any other peer both are ignored. Each proxy appends the
// address it received the request from, so the list is read from the right: trusted hops are
// skipped and the first untrusted one is the client (what a client wrote further left is never
// reached). Per-address budgets and anything else reading ctx.remoteAddress see this address.
import { isIP } from 'node:net';
import { plainAddress, type ProxyList } from '../address-list.js';

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
