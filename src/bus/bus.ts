// The bus port: committed event batches travel from the node that committed them to every node's
// sockets. Memory here; Redis pub/sub carries them across nodes.
import type { CommittedEvent } from '../../actors/board-actor.js';

export type BusHandler = (boardId: string, events: CommittedEvent[]) => void;

export interface Bus {
  /** local: this node only; ok: connected across nodes; degraded: cross-node delivery is down. */
  readonly health: 'local' | 'ok' | 'degraded';
  /** Called once per commit, after the events are in the log. */
  publish(boardId: string, events: CommittedEvent[]): void;
  subscribe(handler: BusHandler): () => void;
  close(): Promise<void>;
}

export class MemoryBus implements Bus {
  readonly health = 'local' as const;
  private readonly handlers = new Set<BusHandler>();

  publish(boardId: string, events: CommittedEvent[]): void {
    for (const handler of this.handlers) handler(boardId, events);
  }

  subscribe(handler: BusHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}
