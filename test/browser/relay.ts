// A TCP relay in front of a test server, so a browser's connections can be cut as a network
// would cut them (shared by the browser suites that drop the page's socket).
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP relay in front of the server: the browser's origin, so that its connections can be cut
 * like a network would cut them. (Chromium's offline emulation, context.setOffline, fails new
 * requests but leaves an open WebSocket open.)
 */
export interface Relay {
  origin: string;
  to(url: string): void;
  /** Severs every relayed connection and refuses new ones until restored. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startRelay(): Promise<Relay> {
  const open = new Set<Socket>();
  let target: URL | null = null;
  let severed = false;
  const relay = createServer((client) => {
    if (severed || !target) return void client.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on('error', end).on('close', end);
      open.add(s);
    }
    client.pipe(upstream).pipe(client);
  });
  const host = `127.${1 + Math.floor(Math.random() * 254)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;
  await new Promise<void>((resolve, reject) => relay.once('error', reject).listen(0, host, resolve));
  return {
    origin: `http://${host}:${(relay.address() as AddressInfo).port}`,
    to: (url) => void (target = new URL(url)),
    cut() {
      severed = true;
      for (const s of open) s.destroy();
    },
    restore: () => void (severed = false),
    close() {
      for (const s of open) s.destroy();
      return new Promise((resolve) => relay.close(() => resolve()));
    },
  };
}
