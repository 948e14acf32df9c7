// The `error` message: the REST error envelope (one wire shape for both), each with an id of its own.
import { errorEnvelope, errorRecord } from '../errors/envelope.js';
import type { ResolutionObserver } from '../errors/observed-resolution.js';
import type { ErrorCode } from '../errors/registry.js';
import { transmit, type Connection } from './connection.js';

export interface SocketErrorsDeps {
  publicUrl: string;
  observer: Pick<ResolutionObserver, 'resolution'>;
}

export class SocketErrors {
  private sent = 0;

  constructor(private readonly deps: SocketErrorsDeps) {}

  send(conn: Connection, code: ErrorCode, message: string, details?: Record<string, unknown>): void {
    const record = errorRecord(code, this.deps.publicUrl, this.deps.observer.resolution(code));
    transmit(
      conn,
      JSON.stringify({ type: 'error', ...errorEnvelope(record, message, `ws-${conn.id}-${++this.sent}`, details) }),
    );
  }
}
