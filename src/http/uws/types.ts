// What the uWebSockets.js transport asks of the server (handlers, socket and peer endpoints) and
// what it gives back (HttpServer); nothing here touches uWS itself.
import type { Route, Reply } from '../route.js';
import type { Identity } from '../../auth/identity.js';
import type { Connection } from '../../ws/hub.js';
import type { RawRequest } from '../pipeline.js';
import type { RawResponse } from '../responses.js';

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
   * with what else is published meanwhile (see src/http/uws/publish-batch.ts).
   */
  publish(topic: string, message: string | Uint8Array): void;
  /** Stops accepting connections; open requests continue. */
  stopListening(): void;
}
