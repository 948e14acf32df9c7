// The bus port: committed event batches travel from the node that committed them to every node's
// sockets. Memory here; Redis pub/sub carries them across nodes.
import type { CommittedEvent } from '../../actors/board-actor.js';
import type { ResolutionNote } from '../errors/observed-resolution.js';
import type { NodeFigures } from '../admin/utilization.js';
import type { CachedCollection } from '../auth/identity-cache.js';

export type BusHandler = (boardId: string, events: CommittedEvent[]) => void;

/** What nodes tell each other besides committed events. */
export type Notice =
  /** Close the sockets of a revoked credential: one session, all of an account's sessions, one token, a whole account, or every token of a deleted board. */
  | {
      kind: 'revoked';
      sessionId?: string;
      accountSessions?: string;
      tokenId?: string;
      accountId?: string;
      boardId?: string;
    }
  /** A shout was posted: push it to the board's subscribers that may see it. */
  | {
      kind: 'shout';
      boardId: string;
      shout: {
        id: string;
        from: string;
        text: string;
        kind: string;
        workId: string | null;
        to: string | null;
        at: number;
      };
    }
  /** An agent sent a heartbeat: push its presence to the board's watchers of the roster (not logged, like a lease warning). */
  | {
      kind: 'presence';
      boardId: string;
      presence: { principal: string; status: string; note: string; workId: string | null; seenAt: number };
    }
  /** An account's role on a board changed (null: no longer a member): its sockets on that board are unsubscribed and must subscribe again under the new role. */
  | { kind: 'membership'; boardId: string; accountId: string; role: 'owner' | 'admin' | 'member' | 'viewer' | null }
  /** A lease has 20% left: tell its holder. */
  | { kind: 'lease.expiring'; boardId: string; workId: string; holder: string; expiresAt: number }
  /** Records that credentials and project selection read were written (ids null: any of the collection's): identity caches drop them (src/auth/identity-cache.ts). */
  | { kind: 'records.changed'; collection: CachedCollection; ids: string[] | null }
  /** An operator changed the allowlist: every node reads it again (src/admin/allowlist.ts). */
  | { kind: 'allowlist.changed' }
  /** Cross-node messages may have been lost (the bus reconnected): bring every subscription up to the log. */
  | { kind: 'catch-up' }
  /** A node's own figures, told every few seconds, for the operators' utilization view (src/admin/utilization.ts). */
  | { kind: 'node.figures'; figures: NodeFigures }
  /** An error and what the workspace did next, for GET /api/errors' observedResolution. */
  | ResolutionNote;

export type NoticeHandler = (notice: Notice) => void;

export interface Bus {
  /** local: this node only; ok: connected across nodes; degraded: cross-node delivery is down. */
  readonly health: 'local' | 'ok' | 'degraded';
  /** How many times this node's receiving connection was lost: what it heard across one of them may be incomplete. */
  readonly interruptions: number;
  /** Called once per commit, after the events are in the log. */
  publish(boardId: string, events: CommittedEvent[]): void;
  /**
   * Hears every commit: this node's own, and other nodes' where `interested` says so (those of
   * no interest are not even read: a node with no socket and no actor for a board skips its events).
   */
  subscribe(handler: BusHandler, interested?: (boardId: string) => boolean): () => void;
  /** Tells every node, this one included. */
  notify(notice: Notice): void;
  onNotice(handler: NoticeHandler): () => void;
  close(): Promise<void>;
}

export class MemoryBus implements Bus {
  readonly health = 'local' as const;
  readonly interruptions = 0;
  private readonly handlers = new Set<BusHandler>();
  private readonly noticeHandlers = new Set<NoticeHandler>();

  notify(notice: Notice): void {
    for (const handler of this.noticeHandlers) handler(notice);
  }

  onNotice(handler: NoticeHandler): () => void {
    this.noticeHandlers.add(handler);
    return () => this.noticeHandlers.delete(handler);
  }

  publish(boardId: string, events: CommittedEvent[]): void {
    for (const handler of this.handlers) handler(boardId, events);
  }

  subscribe(handler: BusHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async close(): Promise<void> {
    this.handlers.clear();
    this.noticeHandlers.clear();
  }
}
