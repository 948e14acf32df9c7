// A socket as the hub sees it (src/http/uws.ts makes them), and the one way a message goes to one.
import { CLOSE, SLOW_CONSUMER_REASON } from './protocol.js';
import type { Identity } from '../auth/identity.js';

export interface Connection {
  readonly id: number;
  readonly identity: Identity;
  /** False when the message was dropped for backpressure. A frame is a text message already encoded as UTF-8. */
  send(message: string | Uint8Array): boolean;
  /** Bytes waiting to go out. */
  backlog(): number;
  /** Resolves once the backlog has gone out (or the connection closed; one that stalls while waited on is closed, SLOW_CONSUMER). */
  drained(): Promise<void>;
  /** From now on the socket hears what is published to `topic` (HubDeps.publish), until it leaves it. */
  join(topic: string): void;
  leave(topic: string): void;
  close(code: number, reason: string): void;
}

/** Sends one message; one dropped for backpressure ends the connection, so a client never misses a message unknowingly. */
export function transmit(conn: Connection, message: string | Uint8Array): boolean {
  const sent = conn.send(message);
  if (!sent) conn.close(CLOSE.slowConsumer, SLOW_CONSUMER_REASON);
  return sent;
}
