// How peers reach this node when NODE_URL is not given: the address it listens on, or, when that
// is every interface, its first external IPv4 address (a container's address on its network).
import { networkInterfaces } from 'node:os';

export function defaultNodeUrl(host: string, port: number): string {
  const wildcard = host === '0.0.0.0' || host === '::';
  const address = wildcard ? firstExternalIpv4() : host;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

function firstExternalIpv4(): string {
  for (const list of Object.values(networkInterfaces())) {
    const found = list?.find((a) => a.family === 'IPv4' && !a.internal);
    if (found) return found.address;
  }
  return '127.0.0.1';
}
