// Every uWebSockets.js detail lives here: abort guards set before any await, request fields
// copied synchronously, body chunks copied as they arrive under a size cap, and each response
// written in one cork. Nothing is written to a response whose client went away. A streamed body
// goes out chunk by chunk, each after uWS has sent what it held (backpressure).
import uWS from 'uWebSockets.js';
import { isBodyStream, type BodyStream, type LargeBody, type Reply, type Route } from './route.js';
import type { Identity } from '../auth/identity.js';
import type { Connection } from '../ws/hub.js';
import { CLOSE, SLOW_CONSUMER_REASON } from '../ws/protocol.js';
import { statusLine, type RawRequest, type RawResponse } from './pipeline.js';
import { andThen } from '../../store/ports/maybe.js';

export interface HttpHandlers {
  /** The route's pipeline run. */
  dispatch(route: Route, raw: RawRequest, requestId: string): RawResponse | Promise<RawResponse>;
  /** The answer of a route with a fixed reply. */
  answerFixed(route: Route & { fixed: Reply }, requestId: string): RawResponse;
  /** A response for a request no route takes (404 or 405), or one refused before reading (413, draining). */
  refuse(reason: RefusalReason, requestId: string, allow?: string[]): RawResponse;
  /**
   * As `refuse`, for a request whose headers were read: one made with an impersonation session is
   * marked as every response of that session is, once its session is looked up (later); one with
   * no session cookie is answered now.
   */
  refuseRequest(
    reason: RefusalReason,
    requestId: string,
    requestHeaders: Record<string, string>,
    allow?: string[],
  ): RawResponse | Promise<RawResponse>;
  requestIdOf(headers: Record<string, string>): string;
  /** False while draining: new requests are refused. */
  accepting(): boolean;
  started(): void;
  finished(): void;
}

/** The WebSocket endpoint: authenticated like REST at the upgrade, then messages to a hub. */
export interface SocketHandlers {
  path: string;
  /** The identity for an upgrade (`peer`: the connecting address), or the HTTP response refusing it. */
  authenticate(
    headers: Record<string, string>,
    requestId: string,
    peer: string,
  ): Promise<{ identity: Identity } | { refuse: RawResponse }>;
  open(conn: Connection): void;
  message(conn: Connection, text: string): void;
  close(conn: Connection): void;
  maxPayloadLength: number;
  /** Bytes a socket may have waiting to go out; a send beyond it is refused (the caller closes the socket). */
  maxBackpressure: number;
  idleTimeoutSeconds: number;
}

/** Nodes' channel for forwarded board commands (src/cluster/): a WebSocket outside the route table and the OpenAPI document. */
export interface PeerEndpoint {
  path: string;
  maxPayloadLength: number;
  /** The channel an upgrade with these headers opens, or null to answer exactly as an unknown path. */
  admit(headers: Record<string, string>, peer: string): PeerSession | null;
}

/** One open channel, as its endpoint drives it. */
export interface PeerSession {
  opened(link: PeerLink): void;
  /** A message; `accepting` false while the node drains. What it returns is waited for before the node stops. */
  message(text: string, accepting: boolean): Promise<void> | void;
  closed(): void;
}

export interface PeerLink {
  send(text: string): void;
  close(): void;
}

export type RefusalReason = 'not-found' | 'method-not-allowed' | 'too-large' | 'draining' | 'internal';

export interface HttpServer {
  listen(host: string, port: number): Promise<number>;
  /**
   * One message to every socket joined to `topic`, sent by uWS (one call, however many sockets),
   * after whatever each was sent before and before whatever it is sent after; a socket it leaves
   * over its cap is closed as a slow consumer moments later. It goes out within PUBLISH_WINDOW_MS,
   * with what else is published meanwhile (see `defer`).
   */
  publish(topic: string, message: string | Uint8Array): void;
  /** Stops accepting connections; open requests continue. */
  stopListening(): void;
}

const UWS_METHOD = { get: 'get', post: 'post', patch: 'patch', put: 'put', delete: 'del' } as const;

interface SocketData {
  identity: Identity;
  conn?: SocketConnection;
}

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

/**
 * The status line (uWS writes 200 OK unless told otherwise) and the headers, the headers in one
 * call: uWS writes each as `name: value` and CRLF, so the lines after the first ride in the first
 * one's value. Each call copies its two strings out of V8 (flattened, measured, encoded); one call
 * a response instead of one a header was a microsecond less a request on the status bench (15
 * headers, 9 of them the rate headers). No value holds a CR or LF: each is made here or checked
 * where it comes from the client (the request id), as it had to be with a call each.
 */
function writeHead(res: uWS.HttpResponse, response: RawResponse): void {
  if (response.status !== 200) res.writeStatus(statusLine(response.status));
  const headers = response.headers;
  if (headers.length === 0) return;
  let lines = headers[0]![1];
  for (let i = 1; i < headers.length; i++) lines += `\r\n${headers[i]![0]}: ${headers[i]![1]}`;
  res.writeHeader(headers[0]![0], lines);
}

/**
 * A response whose body is at hand, in one cork: inside uWS's own callback for the request
 * (`inCallback`) uWS has corked the socket already, and a cork of ours would only cost a call
 * into uWS and back.
 */
function writeWhole(res: uWS.HttpResponse, response: RawResponse, headOnly: boolean, inCallback = false): void {
  if (inCallback) writeCorked(res, response, headOnly);
  else res.cork(() => writeCorked(res, response, headOnly));
}

function writeCorked(res: uWS.HttpResponse, response: RawResponse, headOnly: boolean): void {
  const body = response.body as string | Buffer; // not a stream: pour() writes those
  writeHead(res, response);
  // This build's endWithoutBody(length) never ends the response: name the length ourselves.
  if (headOnly) res.writeHeader('content-length', String(Buffer.byteLength(body))).endWithoutBody();
  else res.end(body, response.close ?? false);
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
  if (sockets) mountSockets(app, sockets, handlers);
  if (peers) mountPeers(app, peers, handlers);
  const matchers = routes.map((r) => ({ route: r, pattern: new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}/?$`) }));

  for (const route of routes) {
    const uwsPath = route.path.replace(/\{(\w+)\}/g, ':$1');
    if (route.fixed && route.method === 'get') {
      const fixed = route as Route & { fixed: Reply };
      app.get(uwsPath, (res, req) => answerAtOnce(res, req, fixed, false));
      app.head(uwsPath, (res, req) => answerAtOnce(res, req, fixed, true));
      continue;
    }
    const dispatch = (raw: RawRequest, id: string) => handlers.dispatch(route, raw, id);
    app[UWS_METHOD[route.method]](uwsPath, (res, req) => serve(res, req, dispatch, false, bodyLimit, route.largeBody));
    // HEAD answers as GET would, headers only.
    const dispatchHead = (raw: RawRequest, id: string) => handlers.dispatch(route, { ...raw, method: 'get' }, id);
    if (route.method === 'get') app.head(uwsPath, (res, req) => serve(res, req, dispatchHead, true));
  }
  app.any('/*', (res, req) => {
    serve(
      res,
      req,
      (raw, id) => {
        // An operator route names no method here, to anyone: its path answers another method as an unknown one (404, no Allow).
        const allow = matchers
          .filter((m) => m.route.auth !== 'operator' && m.pattern.test(raw.path))
          .flatMap((m) => (m.route.method === 'get' ? ['GET', 'HEAD'] : [m.route.method.toUpperCase()]));
        return allow.length
          ? handlers.refuseRequest('method-not-allowed', id, raw.headers, allow)
          : handlers.refuseRequest('not-found', id, raw.headers);
      },
      req.getMethod() === 'head',
    );
  });

  /** A fixed reply, written inside this callback: only the request id is read from the request. */
  function answerAtOnce(
    res: uWS.HttpResponse,
    req: uWS.HttpRequest,
    route: Route & { fixed: Reply },
    headOnly: boolean,
  ): void {
    const requestId = handlers.requestIdOf({ 'x-request-id': req.getHeader('x-request-id') });
    writeWhole(
      res,
      handlers.accepting() ? handlers.answerFixed(route, requestId) : handlers.refuse('draining', requestId),
      headOnly,
      true,
    );
  }

  function serve(
    res: uWS.HttpResponse,
    req: uWS.HttpRequest,
    run: (raw: RawRequest, id: string) => RawResponse | Promise<RawResponse>,
    headOnly = false,
    limit = bodyLimit,
    larger?: LargeBody,
  ): void {
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      headers[k] = k in headers ? `${headers[k]}, ${v}` : v;
    });
    const params: string[] = [];
    for (let i = 0; ; i++) {
      const p = req.getParameter(i);
      if (p === undefined || p === '') break;
      params.push(p);
    }
    const method = req.getMethod();
    const raw: RawRequest = {
      method,
      path: req.getUrl(),
      query: req.getQuery() ?? '',
      headers,
      params,
      remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
      body: NO_BODY, // a body read below takes its place (set, not spread: a spread copy costs more than the rest of this copy)
    };
    const exchange = new Exchange(res, handlers, handlers.requestIdOf(headers), headOnly);
    const requestId = exchange.requestId;
    if (!handlers.accepting()) {
      exchange.write(handlers.refuse('draining', requestId), true);
      return;
    }
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > Math.max(limit, larger?.limit ?? 0)) {
      // Refused unread: the connection closes after the answer, whether it is made now or once a session is looked up.
      const refused = handlers.refuseRequest('too-large', requestId, headers);
      if (!(refused instanceof Promise)) return void exchange.write(closing(refused), true);
      handlers.started();
      exchange.guard();
      exchange.answerLater(refused.then(closing));
      return;
    }
    handlers.started();
    if (method === 'get' || headOnly) {
      // No body to wait for: a response ready at once goes out inside this callback.
      let response: RawResponse | Promise<RawResponse>;
      try {
        response = run(raw, requestId);
      } catch {
        response = handlers.refuse('internal', requestId);
      }
      if (!(response instanceof Promise)) {
        if (isBodyStream(response.body)) exchange.guard(); // it outlives this callback
        exchange.finish(response, true);
        return;
      }
      exchange.guard();
      exchange.answerLater(response);
      return;
    }
    exchange.guard();
    exchange.answerLater(
      readBody(
        res,
        {
          limit,
          ...(larger && { larger: { limit: larger.limit, admit: () => larger.admit(headers).catch(() => false) } }),
        },
        (cancel) => (exchange.cancelBody = cancel),
      ).then((body) => {
        if (body === ABORTED) return null;
        if (body === TOO_LARGE) return andThen(handlers.refuseRequest('too-large', requestId, headers), closing);
        raw.body = body;
        return run(raw, requestId);
      }),
    );
  }

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
      defer({ kind: 'publish', app, topic, message }); // what was sent before goes out before it (flushDeferred)
    },
  };
}

let nextConnectionId = 1;
const CLOSE_FRAME_ROOM = 4096;
/**
 * uWS's own backpressure limit for a socket is this many times our cap. A publish goes out inside
 * uWS, so a socket's backlog is checked against the cap only just after it: the room between is
 * what a socket may be sent meanwhile.
 */
const PUBLISH_HEADROOM = 4;
/** How soon after a publish the sockets that may have had it are checked against their cap. */
const PUBLISH_CHECK_MS = 20;
/**
 * How long a publish waits for others: uWS merges what is published to a socket's topics before it
 * writes, so messages published together cost a socket one write. Measured on the fan-out bench
 * (1,000 sockets, 10 senders), server CPU per delivery: 1.62 µs published at once (0.41 writes a
 * delivery), 1.22–1.31 within 2 ms (0.25 writes), 1.06–1.09 within 5 ms. Measured again later, each
 * beside bare uWS publishing at once in the same run (ours ÷ uWS, per run): 1.30–1.39 within 5 ms,
 * 1.22–1.30 within 8 ms, 0.96–1.20 within 10 ms. Ten milliseconds is still under a frame of the
 * live board (16.7 ms at 60 Hz), and far under any agent's turn.
 */
export const PUBLISH_WINDOW_MS = 10;
/**
 * A topic no message is published to, joined by every socket that joins any: uWS 20.x frees a
 * socket's queue of published messages, unsent, when it leaves its last topic (a message published
 * just before an unsubscribe would be lost).
 */
const ANCHOR_TOPIC = '~anchor';
/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT (a const enum member in the typings, so not a value at run time). */
const LISTEN_EXCLUSIVE_PORT = 1;
const TRANSPORT_PAYLOAD_LIMIT = 4 * 1024 * 1024;

function mountSockets(app: uWS.TemplatedApp, sockets: SocketHandlers, handlers: HttpHandlers): void {
  app.ws<SocketData>(sockets.path, {
    // Our own limit is checked per message (closing with 1009 and a reason); uWS's, well above
    // it, only stops a peer sending megabytes (it drops the connection without a close frame).
    maxPayloadLength: Math.max(sockets.maxPayloadLength, TRANSPORT_PAYLOAD_LIMIT),
    // Our cap is checked before each send (below) and just after each publish, so the close frame
    // that follows still fits; uWS's own limit, well above it, is the last resort.
    maxBackpressure: sockets.maxBackpressure * PUBLISH_HEADROOM + CLOSE_FRAME_ROOM,
    closeOnBackpressureLimit: 1,
    idleTimeout: sockets.idleTimeoutSeconds,
    sendPingsAutomatically: true,
    upgrade(res, req, context) {
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      const headers: Record<string, string> = {};
      req.forEach((k, v) => {
        headers[k] = v;
      });
      const requestId = handlers.requestIdOf(headers);
      const [key, protocol, extensions] = [
        'sec-websocket-key',
        'sec-websocket-protocol',
        'sec-websocket-extensions',
      ].map((h) => headers[h] ?? '');
      const peer = Buffer.from(res.getRemoteAddressAsText()).toString();
      sockets.authenticate(headers, requestId, peer).then(
        (result) => {
          if (aborted) return;
          if ('identity' in result)
            res.cork(() =>
              res.upgrade<SocketData>({ identity: result.identity }, key!, protocol!, extensions!, context),
            );
          else writeWhole(res, result.refuse, false);
        },
        () => {
          if (!aborted) res.cork(() => res.writeStatus(statusLine(500)).end());
        },
      );
    },
    open(ws) {
      const data = ws.getUserData();
      data.conn = new SocketConnection(ws, data.identity, sockets.maxBackpressure);
      sockets.open(data.conn);
    },
    message(ws, message) {
      const conn = ws.getUserData().conn;
      if (!conn) return;
      if (message.byteLength > sockets.maxPayloadLength)
        return conn.close(CLOSE.tooBig, `message too big: at most ${sockets.maxPayloadLength} bytes`);
      sockets.message(conn, Buffer.from(message).toString('utf8'));
    },
    drain(ws) {
      ws.getUserData().conn?.onDrain();
    },
    close(ws) {
      const conn = ws.getUserData().conn;
      if (!conn) return;
      conn.ended(); // uWS frees the socket after this callback: never touch it again
      sockets.close(conn);
    },
  });
}

interface PeerData {
  session: PeerSession;
  /** Open, and not yet closed: the socket may be written. */
  live: boolean;
}

/**
 * The peers' channel: admitted at the upgrade (synchronously: the hello is checked in place),
 * refused as an unknown path otherwise, and while the node drains. Each message counts as a
 * request in flight until its session has answered it, so a draining node answers what it took.
 */
function mountPeers(app: uWS.TemplatedApp, peers: PeerEndpoint, handlers: HttpHandlers): void {
  app.ws<PeerData>(peers.path, {
    maxPayloadLength: peers.maxPayloadLength,
    maxBackpressure: peers.maxPayloadLength * 2,
    closeOnBackpressureLimit: 1,
    // A peer gone without a word (a host lost) is found by its missing pongs, and its session freed.
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade(res, req, context) {
      const headers: Record<string, string> = {};
      req.forEach((k, v) => {
        headers[k] = v;
      });
      const requestId = handlers.requestIdOf(headers);
      if (!handlers.accepting()) return writeWhole(res, handlers.refuse('draining', requestId), false);
      const session = peers.admit(headers, Buffer.from(res.getRemoteAddressAsText()).toString());
      if (!session) return writeWhole(res, handlers.refuse('not-found', requestId), false);
      res.upgrade<PeerData>(
        { session, live: false },
        headers['sec-websocket-key']!,
        headers['sec-websocket-protocol'] ?? '',
        headers['sec-websocket-extensions'] ?? '',
        context,
      );
    },
    open(ws) {
      const data = ws.getUserData();
      data.live = true;
      const end = () => {
        if (data.live) ws.end(1000);
      };
      data.session.opened({
        send: (text) => {
          if (data.live && ws.send(text, false) === 2) end(); // dropped: the peer's answers are incomplete, so the channel ends
        },
        close: end,
      });
    },
    message(ws, message) {
      const pending = ws.getUserData().session.message(Buffer.from(message).toString('utf8'), handlers.accepting());
      if (!pending) return;
      handlers.started();
      void pending.finally(() => handlers.finished());
    },
    close(ws) {
      const data = ws.getUserData();
      data.live = false; // uWS frees the socket after this callback: never touch it again
      data.session.closed();
    },
  });
}

/** Sockets with messages waiting for the end of this turn of the event loop. */
const unflushed = new Set<SocketConnection>();
/** Sockets joined to a topic: what a publish leaves them is checked against their cap. */
const joined = new Set<SocketConnection>();
let backlogCheck: ReturnType<typeof setTimeout> | null = null;

function checkBacklogs(): void {
  backlogCheck = null;
  for (const conn of joined) conn.checkBacklog();
}

/**
 * What waits for the publish window, in the order it was asked for. While a publish waits, a
 * socket's own sends and its joins and leaves of topics wait behind it too: each socket hears
 * everything in the order it was sent, published or not, and a socket that joins a topic hears
 * exactly what is published to it after the join.
 */
type Deferred =
  | { kind: 'publish'; app: uWS.TemplatedApp; topic: string; message: string | Uint8Array }
  | { kind: 'send'; conn: SocketConnection; message: string | Uint8Array; size: number }
  | { kind: 'join' | 'leave'; conn: SocketConnection; topic: string };
const deferred: Deferred[] = [];
let publishWindow: ReturnType<typeof setTimeout> | null = null;

function defer(op: Deferred): void {
  deferred.push(op);
  publishWindow ??= setTimeout(flushDeferred, PUBLISH_WINDOW_MS);
}

/** Runs what waits, in order; at the window's end, or at once before a socket closes. */
function flushDeferred(): void {
  if (publishWindow) clearTimeout(publishWindow);
  publishWindow = null;
  if (deferred.length === 0) return;
  for (const op of deferred.splice(0)) {
    if (op.kind !== 'publish') op.conn.apply(op);
    else {
      flushSockets(); // the sends queued before it go out before it
      op.app.publish(op.topic, op.message, false);
    }
  }
  backlogCheck ??= setTimeout(checkBacklogs, PUBLISH_CHECK_MS);
}

function flushSockets(): void {
  const due = [...unflushed];
  unflushed.clear();
  for (const conn of due) conn.flush();
}

/**
 * One socket. What is sent during a turn of the event loop goes out corked at its end, so a
 * socket hearing many messages at once costs one write, not one each; the cap counts both what
 * waits here and what uWS holds.
 */
class SocketConnection implements Connection {
  readonly id = nextConnectionId++;
  private closed = false;
  private pending: (string | Uint8Array)[] = [];
  private pendingBytes = 0;
  /** Bytes of this socket's sends waiting behind a publish (`deferred`). */
  private deferredBytes = 0;
  /**
   * At least what uWS holds unsent of what this socket was sent itself (exact when last asked;
   * only drains after). Published messages are not counted: a socket joined to a topic asks uWS.
   */
  private heldByUws = 0;
  /** Joined to a topic (and so to the anchor): what uWS holds for it may include published messages. */
  private onTopics = false;
  /** Readers waiting for an empty backlog; made when the first one waits. */
  private waiting: (() => void)[] | null = null;

  constructor(
    private readonly ws: uWS.WebSocket<SocketData>,
    readonly identity: Identity,
    private readonly cap: number,
  ) {}

  send(message: string | Uint8Array): boolean {
    if (this.closed) return false;
    const size = typeof message === 'string' ? Buffer.byteLength(message) : message.byteLength;
    // uWS is asked what it holds only when the bound kept here says the message may not fit (or
    // may be wrong: a published message is not in it).
    const waiting = this.pendingBytes + this.deferredBytes;
    if (this.onTopics || this.heldByUws + waiting + size > this.cap) {
      this.heldByUws = this.ws.getBufferedAmount();
      if (this.heldByUws + waiting + size > this.cap) return false;
    }
    if (deferred.length > 0) {
      // A publish waits: this goes out after it.
      this.deferredBytes += size;
      defer({ kind: 'send', conn: this, message, size });
      return true;
    }
    this.queue(message, size);
    return true;
  }

  /** Queues a message for the end of this turn of the event loop. */
  private queue(message: string | Uint8Array, size: number): void {
    if (this.pending.length === 0 && unflushed.add(this).size === 1) setImmediate(flushSockets);
    this.pending.push(message);
    this.pendingBytes += size;
  }

  /** Does what waited behind a publish, now that it went out. */
  apply(op: Extract<Deferred, { conn: SocketConnection }>): void {
    if (this.closed) return; // ended: its bytes were forgotten then
    if (op.kind === 'send') {
      this.deferredBytes -= op.size;
      this.queue(op.message, op.size);
    } else if (op.kind === 'join') this.joinNow(op.topic);
    else this.leaveNow(op.topic);
  }

  /** Writes what waits, in order, in one corked batch (a lone message needs no cork). */
  flush(): void {
    if (this.closed || this.pending.length === 0) return;
    const out = this.pending;
    const bytes = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    let dropped = false;
    if (out.length === 1) dropped = this.ws.send(out[0]!, false) === 2;
    else {
      this.ws.cork(() => {
        for (const message of out) dropped ||= this.ws.send(message, false) === 2;
      });
    }
    if (dropped) return this.close(CLOSE.slowConsumer, SLOW_CONSUMER_REASON);
    this.heldByUws += bytes; // at most: uWS may have written some of it out already
    this.wakeIfEmpty();
  }

  backlog(): number {
    return this.closed ? 0 : this.ws.getBufferedAmount() + this.pendingBytes + this.deferredBytes;
  }

  join(topic: string): void {
    if (deferred.length > 0) return defer({ kind: 'join', conn: this, topic });
    this.joinNow(topic);
  }

  private joinNow(topic: string): void {
    if (this.closed) return;
    if (!this.onTopics) {
      this.onTopics = true;
      this.ws.subscribe(ANCHOR_TOPIC);
      joined.add(this);
    }
    this.ws.subscribe(topic);
  }

  leave(topic: string): void {
    if (deferred.length > 0) return defer({ kind: 'leave', conn: this, topic });
    this.leaveNow(topic);
  }

  private leaveNow(topic: string): void {
    if (!this.closed) this.ws.unsubscribe(topic);
  }

  /** After a publish: a backlog past the cap is a slow consumer, as a send refused would be. */
  checkBacklog(): void {
    if (this.backlog() > this.cap) this.close(CLOSE.slowConsumer, SLOW_CONSUMER_REASON);
  }

  drained(): Promise<void> {
    return this.backlog() === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => (this.waiting ??= []).push(resolve));
  }

  /** uWS wrote some of what it held: learn how much it holds now, and wake the readers waiting for an empty backlog. */
  onDrain(): void {
    if (!this.closed) this.heldByUws = this.ws.getBufferedAmount();
    this.wakeIfEmpty();
  }

  private wakeIfEmpty(): void {
    if (this.waiting === null || this.backlog() > 0) return;
    const ready = this.waiting;
    this.waiting = null;
    for (const resolve of ready) resolve();
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    flushDeferred(); // what was accepted goes out before the close frame: what waits behind a publish,
    this.flush(); // then what waits for the end of the turn
    if (this.closed) return;
    this.closed = true;
    joined.delete(this);
    this.ws.end(code, reason);
    this.wakeIfEmpty();
  }

  /** The socket is gone (uWS frees it after its close callback). */
  ended(): void {
    this.closed = true;
    joined.delete(this);
    this.pending = [];
    this.pendingBytes = 0;
    this.deferredBytes = 0; // what waits behind a publish is skipped when it comes up
    unflushed.delete(this);
    this.wakeIfEmpty();
  }
}

/** What a streamed response knows of its client: gone, and how to wake a write waiting for it to read. */
interface Client {
  gone: boolean;
  wake: ((writable: boolean) => void) | null;
}

/**
 * One request's answer: written once, and never after its client went away. A class, not closures
 * made per request: tsx (the shipped `npm start`) keeps function names by defining each closure's
 * name as it is made, which cost more per request than the rest of this bookkeeping.
 */
class Exchange {
  private aborted = false;
  /** Stops reading a body still on its way. */
  cancelBody: (() => void) | null = null;
  private readonly client: Client = { gone: false, wake: null };
  /** A whole response waiting in `held`. */
  private response: RawResponse | null = null;

  constructor(
    private readonly res: uWS.HttpResponse,
    private readonly handlers: HttpHandlers,
    readonly requestId: string,
    private readonly headOnly: boolean,
  ) {}

  /**
   * Needed only by a response that outlives the uWS callback: set before the first await, or right
   * after learning the response is not ready (still inside the callback).
   */
  guard(): void {
    this.res.onAborted(() => {
      this.aborted = true;
      this.client.gone = true;
      this.client.wake?.(false); // a stream waiting for the client to take its chunks stops
      this.cancelBody?.(); // a client gone mid-body must not stay in flight
    });
  }

  /**
   * Writes the response (`inCallback`: from inside uWS's callback for the request); a streamed one
   * resolves once its last chunk is written (or the client left).
   */
  write(response: RawResponse, inCallback = false): Promise<void> | undefined {
    const body = response.body;
    if (this.aborted) {
      if (isBodyStream(body)) void body[Symbol.asyncIterator]().return?.();
      return;
    }
    this.aborted = true; // one response only
    if (isBodyStream(body)) return pour(this.res, response, body, this.headOnly, this.client);
    writeWhole(this.res, response, this.headOnly, inCallback);
  }

  /**
   * Answers a request whose response was not ready inside the uWS callback (null: the client went
   * away), then counts it finished. A whole response waits for the end of this turn of the event
   * loop (see `held`); a streamed one starts at once.
   */
  answerLater(pending: Promise<RawResponse | null>): void {
    pending.then(
      (response) => this.answer(response),
      () => this.answer(this.handlers.refuse('internal', this.requestId)),
    );
  }

  /**
   * Writes the response, then counts the request finished: a streamed one once its last chunk is
   * out, any other at once, also when the write throws (the error goes on to the caller).
   */
  finish(response: RawResponse, inCallback = false): void {
    let streaming: Promise<void> | undefined;
    try {
      streaming = this.write(response, inCallback);
    } finally {
      if (streaming) void streaming.finally(() => this.handlers.finished());
      else this.handlers.finished();
    }
  }

  private answer(response: RawResponse | null): void {
    if (response === null) return this.handlers.finished();
    if (isBodyStream(response.body)) return this.finish(response);
    this.response = response;
    if (held.length === 0) setImmediate(writeAllHeld);
    held.push(this);
  }

  /** The response answer() held back, written now (unless the client left meanwhile). */
  writeHeld(): void {
    const response = this.response!;
    this.response = null;
    this.finish(response);
  }
}

/**
 * Exchanges whose whole response is ready, written together once the event loop's poll phase has
 * run every request that arrived with them. Written one by one as each is ready, every response
 * woke its client on its own: on the status bench (32 connections), 12 µs of the 45 µs a request
 * took was the send, most of it the kernel waking the client. Written together, the first send
 * wakes the client and the rest find it awake: 31,000 → 42,000 req/s, 39 → 29 µs of server CPU a
 * request. A response waits at most for the requests read in the same turn.
 */
const held: Exchange[] = [];

function writeAllHeld(): void {
  for (const exchange of held.splice(0)) {
    try {
      exchange.writeHeld();
    } catch {
      // uWS refused the write (the connection is closing): the others still go out
    }
  }
}

/**
 * Writes a streamed body: status and headers, then each chunk in its own cork. When uWS holds what
 * the client has not read yet, the next chunk is asked for only once it is sent (onWritable). A
 * client that goes away ends the iteration; a source that fails mid-way closes the connection (the
 * status is already sent, so only a body cut short can tell the client). HEAD: headers only.
 */
async function pour(
  res: uWS.HttpResponse,
  response: RawResponse,
  body: BodyStream,
  headOnly: boolean,
  client: Client,
): Promise<void> {
  res.cork(() => {
    writeHead(res, response);
    if (headOnly) res.endWithoutBody();
  });
  if (headOnly) {
    await body[Symbol.asyncIterator]().return?.();
    return;
  }
  const writable = () =>
    new Promise<boolean>((resolve) => {
      client.wake = resolve;
      res.onWritable(() => {
        client.wake = null;
        resolve(true);
        return true;
      });
    });
  try {
    for await (const chunk of body) {
      if (client.gone) return; // leaving the loop ends the source
      if (chunk.length === 0) continue; // an empty write would end the chunked body
      let sent = true;
      res.cork(() => {
        sent = res.write(chunk);
      });
      if (!sent && !(await writable())) return;
    }
    if (!client.gone) res.cork(() => res.end());
  } catch {
    if (client.gone) return;
    client.gone = true;
    res.close();
  }
}

/** A response after which the connection closes: its request's body was not read, or not all of it. */
const closing = (response: RawResponse): RawResponse => ({ ...response, close: true });

const TOO_LARGE = Symbol('too large');
const ABORTED = Symbol('aborted');

const NO_BODY = Buffer.alloc(0);

/** The body a request may send: `limit`, or `larger.limit` once its caller is admitted. */
interface BodyCap {
  limit: number;
  /** Asked only of a body that passes `limit`. */
  larger?: { limit: number; admit: () => Promise<boolean> };
}

/**
 * Reads the whole body, copying each chunk (uWS reuses its buffer); past the cap nothing more is
 * kept. A body passing `limit` on a route with a larger one waits, paused, until the caller is
 * known to be admitted to it.
 */
function readBody(
  res: uWS.HttpResponse,
  cap: BodyCap,
  onCancel: (cancel: () => void) => void,
): Promise<Buffer | typeof TOO_LARGE | typeof ABORTED> {
  return new Promise((resolve) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let limit = cap.limit;
    let last = false;
    let done = false;
    let deciding = false;
    const finish = (outcome: Buffer | typeof TOO_LARGE | typeof ABORTED) => {
      if (done) return;
      done = true;
      chunks = [];
      resolve(outcome);
    };
    onCancel(() => finish(ABORTED));
    const settle = () => {
      if (size > limit) return finish(TOO_LARGE);
      if (last) finish(Buffer.concat(chunks, size));
    };
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      last = isLast;
      if (size > (cap.larger?.limit ?? limit)) return finish(TOO_LARGE);
      chunks.push(Buffer.from(chunk.slice(0)));
      if (size <= limit || !cap.larger || limit === cap.larger.limit) return settle();
      if (deciding) return;
      deciding = true;
      res.pause();
      void cap.larger.admit().then((admitted) => {
        if (done) return;
        limit = admitted ? cap.larger!.limit : cap.limit;
        res.resume(); // always: a body that ended while paused leaves the connection paused for the next request
        settle();
      });
    });
  });
}
