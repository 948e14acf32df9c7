// The entry node's side of forwarding: a board command sealed for its home node and posted over a
// kept-alive HTTP/1.1 connection. What came of it is told apart by whether the home can have
// decided it: a command that never reached the home may go again; one whose answer was lost may
// have been committed, so the caller gets 503 BOARD_BUSY, as for any lost response.
import { Agent, request } from 'node:http';
import { Agent as TlsAgent, request as tlsRequest } from 'node:https';
import type { BoardCommand } from '../board/commands.js';
import { seal, SIGNATURE_HEADER } from './signed-envelope.js';
import type { NodeAddress } from './homes.js';
import type { Answer } from './wire.js';

export const FORWARD_PATH = '/internal/board-command';

export type Forwarded =
  /** The home answered (a reply, a refusal, or moved). */
  | { outcome: 'answered'; answer: Answer }
  /** It never reached a node that could decide it (refused connection, a draining node): it may go again. */
  | { outcome: 'unreachable' }
  /** It may have been decided, and the answer is lost (the home died or timed out). */
  | { outcome: 'unknown' };

/** Errors that mean no byte of the request reached a server. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export class Forwarder {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });
  private readonly tlsAgent = new TlsAgent({ keepAlive: true, maxSockets: 256 });

  constructor(
    private readonly key: Buffer,
    private readonly self: string,
    private readonly clock: () => number,
  ) {}

  send(to: NodeAddress, boardId: string, command: BoardCommand, timeoutMs: number): Promise<Forwarded> {
    const { body, signature } = seal(this.key, { from: this.self, to: to.node, at: this.clock(), boardId, command });
    const secure = to.url.startsWith('https:');
    return new Promise((resolve) => {
      const req = (secure ? tlsRequest : request)(`${to.url}${FORWARD_PATH}`, {
        method: 'POST',
        agent: secure ? this.tlsAgent : this.agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), [SIGNATURE_HEADER]: signature },
        timeout: Math.max(1, timeoutMs),
      });
      req.on('timeout', () => req.destroy(new Error('forward timed out')));
      req.on('error', (e: NodeJS.ErrnoException) => resolve({ outcome: NOT_SENT.has(e.code ?? '') ? 'unreachable' : 'unknown' }));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => resolve({ outcome: 'unknown' }));
        res.on('end', () => {
          // A node that is draining refuses before reading anything: another may decide it.
          if (res.statusCode === 503 && res.headers.connection === 'close') return resolve({ outcome: 'unreachable' });
          if (res.statusCode !== 200) return resolve({ outcome: 'unknown' });
          try {
            resolve({ outcome: 'answered', answer: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer });
          } catch {
            resolve({ outcome: 'unknown' });
          }
        });
      });
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
    this.tlsAgent.destroy();
  }
}
