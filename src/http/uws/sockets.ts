// One server's WebSockets: the upgrade (authenticated like REST), the uWS callbacks, and the set
// of its sockets with messages waiting for the end of the turn or a backlog to check after a publish.
import type uWS from 'uWebSockets.js';
import { CLOSE } from '../../ws/protocol.js';
import { statusLine } from '../responses.js';
import type { HttpHandlers, SocketHandlers } from './types.js';
import { writeWhole } from './respond.js';
import type { PublishBatch, QueuedSockets } from './publish-batch.js';
import { SocketConnection, type SocketData, type SocketPool } from './socket-connection.js';

const CLOSE_FRAME_ROOM = 4096;
/**
 * uWS's own backpressure limit for a socket is this many times our cap. A publish goes out inside
 * uWS, so a socket's backlog is checked against the cap only just after it: the room between is
 * what a socket may be sent meanwhile.
 */
const PUBLISH_HEADROOM = 4;
/** How soon after a publish the sockets that may have had it are checked against their cap. */
const PUBLISH_CHECK_MS = 20;
const TRANSPORT_PAYLOAD_LIMIT = 4 * 1024 * 1024;

/** One server's sockets: their ids, the ones with messages waiting, and the ones on topics. */
export class ServerSockets implements SocketPool, QueuedSockets {
  private nextId = 1;
  /** Sockets with messages waiting for the end of this turn of the event loop. */
  private readonly unflushed = new Set<SocketConnection>();
  /** Sockets joined to a topic: what a publish leaves them is checked against their cap. */
  private readonly joined = new Set<SocketConnection>();
  private backlogCheck: ReturnType<typeof setTimeout> | null = null;

  newId(): number {
    return this.nextId++;
  }

  queued(conn: SocketConnection): void {
    if (this.unflushed.add(conn).size === 1) setImmediate(this.flushQueued);
  }

  readonly flushQueued = (): void => {
    const due = [...this.unflushed];
    this.unflushed.clear();
    for (const conn of due) conn.flush();
  };

  joinedTopics(conn: SocketConnection): void {
    this.joined.add(conn);
  }

  closed(conn: SocketConnection): void {
    this.joined.delete(conn);
  }

  ended(conn: SocketConnection): void {
    this.joined.delete(conn);
    this.unflushed.delete(conn);
  }

  checkBacklogsSoon(): void {
    this.backlogCheck ??= setTimeout(this.checkBacklogs, PUBLISH_CHECK_MS);
  }

  private readonly checkBacklogs = (): void => {
    this.backlogCheck = null;
    for (const conn of this.joined) conn.checkBacklog();
  };
}

/** The socket endpoint on `app`: each socket a SocketConnection of `sockets`, its publishes ordered by `batch`. */
export function mountSockets(
  app: uWS.TemplatedApp,
  endpoint: SocketHandlers,
  handlers: HttpHandlers,
  sockets: ServerSockets,
  batch: PublishBatch,
): void {
  const shared = { cap: endpoint.maxBackpressure, pool: sockets, batch };
  app.ws<SocketData>(endpoint.path, {
    // Our own limit is checked per message (closing with 1009 and a reason); uWS's, well above
    // it, only stops a peer sending megabytes (it drops the connection without a close frame).
    maxPayloadLength: Math.max(endpoint.maxPayloadLength, TRANSPORT_PAYLOAD_LIMIT),
    // Our cap is checked before each send (below) and just after each publish, so the close frame
    // that follows still fits; uWS's own limit, well above it, is the last resort.
    maxBackpressure: endpoint.maxBackpressure * PUBLISH_HEADROOM + CLOSE_FRAME_ROOM,
    closeOnBackpressureLimit: 1,
    idleTimeout: endpoint.idleTimeoutSeconds,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => upgrade(res, req, context, endpoint, handlers),
    open(ws) {
      const data = ws.getUserData();
      data.conn = new SocketConnection(sockets.newId(), ws, data.identity, shared);
      endpoint.open(data.conn);
    },
    message(ws, message) {
      const conn = ws.getUserData().conn;
      if (!conn) return;
      if (message.byteLength > endpoint.maxPayloadLength)
        return conn.close(CLOSE.tooBig, `message too big: at most ${endpoint.maxPayloadLength} bytes`);
      endpoint.message(conn, Buffer.from(message).toString('utf8'));
    },
    drain(ws) {
      ws.getUserData().conn?.onDrain();
    },
    close(ws) {
      const conn = ws.getUserData().conn;
      if (!conn) return;
      conn.ended(); // uWS frees the socket after this callback: never touch it again
      endpoint.close(conn);
    },
  });
}

/** Reads the upgrade request at once, authenticates it (awaited), then upgrades or refuses unless the client left. */
function upgrade(
  res: uWS.HttpResponse,
  req: uWS.HttpRequest,
  context: uWS.us_socket_context_t,
  endpoint: SocketHandlers,
  handlers: HttpHandlers,
): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  const headers: Record<string, string> = {};
  req.forEach((k, v) => {
    headers[k] = v;
  });
  const requestId = handlers.requestIdOf(headers);
  const [key, protocol, extensions] = ['sec-websocket-key', 'sec-websocket-protocol', 'sec-websocket-extensions'].map(
    (h) => headers[h] ?? '',
  );
  const peer = Buffer.from(res.getRemoteAddressAsText()).toString();
  endpoint.authenticate(headers, requestId, peer).then(
    (result) => {
      if (aborted) return;
      if ('identity' in result)
        res.cork(() => res.upgrade<SocketData>({ identity: result.identity }, key!, protocol!, extensions!, context));
      else writeWhole(res, result.refuse, false);
    },
    () => {
      if (!aborted) res.cork(() => res.writeStatus(statusLine(500)).end());
    },
  );
}
