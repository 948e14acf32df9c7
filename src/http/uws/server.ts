// Creates one uWebSockets.js server and wires its parts; every part's state (held responses, the
// publish window, its sockets) is made here, per server, so two servers in a process share nothing.
import uWS from 'uWebSockets.js';
import type { Route } from '../route.js';
import type { HttpHandlers, HttpServer, PeerEndpoint, SocketHandlers } from './types.js';
import { HeldWrites } from './exchange.js';
import { RouteTable } from './routes.js';
import { PublishBatch } from './publish-batch.js';
import { mountSockets, ServerSockets } from './sockets.js';
import { mountPeers } from './peer-links.js';

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT (a const enum member in the typings, so not a value at run time). */
const LISTEN_EXCLUSIVE_PORT = 1;

/**
 * The installable uWebSockets.js (package.json names it, under the alias `uWebSockets.js`, so a
 * newer build replaces it there) falls back silently to a slow JavaScript server on a Node
 * version it has no binary for. Refuse to start instead.
 */
export function assertNativeBinding(): void {
  if (!/\[native code\]/.test(Function.prototype.toString.call(uWS.App))) {
    throw new Error(
      `uWebSockets.js has no native binary for Node ${process.version} (ABI ${process.versions.modules}) on ${process.platform}-${process.arch}; ` +
        'it would fall back to a slow JavaScript server. Use a Node version package.json "engines" allows.',
    );
  }
}

export function createHttpServer(
  routes: readonly Route[],
  handlers: HttpHandlers,
  bodyLimit: number,
  sockets?: SocketHandlers,
  peers?: PeerEndpoint,
): HttpServer {
  assertNativeBinding();
  const app = uWS.App();
  const serverSockets = new ServerSockets();
  const batch = new PublishBatch(app, serverSockets);
  if (sockets) mountSockets(app, sockets, handlers, serverSockets, batch);
  if (peers) mountPeers(app, peers, handlers);
  new RouteTable(handlers, bodyLimit, new HeldWrites()).mount(app, routes);

  let listenSocket: uWS.us_listen_socket | null = null;
  return {
    listen(host, port) {
      return new Promise((resolve, reject) => {
        // Exclusive: uWS listens with SO_REUSEPORT otherwise, and a second node started on a port in
        // use would silently share it instead of failing. (The native call takes host, port,
        // options, callback; this build's typings lack that overload.)
        const listen = app.listen as unknown as (
          host: string,
          port: number,
          options: number,
          cb: (socket: uWS.us_listen_socket | false) => void,
        ) => void;
        listen.call(app, host, port, LISTEN_EXCLUSIVE_PORT, (socket) => {
          if (!socket) return reject(new Error(`cannot listen on ${host}:${port}`));
          listenSocket = socket;
          resolve(uWS.us_socket_local_port(socket));
        });
      });
    },
    stopListening() {
      if (listenSocket) uWS.us_listen_socket_close(listenSocket);
      listenSocket = null;
    },
    publish(topic, message) {
      batch.publish(topic, message);
    },
  };
}
