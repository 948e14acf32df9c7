// One timer per board, set for its nearest lease event: the 20% warning or the expiry. Expiry is
// a command through the actor (so it commits once, with the version check, on whichever node);
// the warning is only told to listeners.
import type { Board } from '../machines/board.js';
import { expireDue } from '../machines/board-commands.js';
import type { BoardActor } from './board-actor.js';

export const WARN_AT_REMAINING = 0.2;

export type WarningListener = (boardId: string, warning: { workId: string; holder: string; expiresAt: number }) => void;

export class LeaseScheduler {
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; at: number }>();
  private readonly warned = new Set<string>();
  private readonly warningListeners = new Set<WarningListener>();

  constructor(private readonly clock: () => number) {}

  onWarning(listener: WarningListener): void {
    this.warningListeners.add(listener);
  }

  has(boardId: string): boolean {
    return this.timers.has(boardId);
  }

  /** When the board's timer is meant to fire, by the clock; null without one. */
  plannedAt(boardId: string): number | null {
    return this.timers.get(boardId)?.at ?? null;
  }

  /**
   * (Re)arms the board's timer for its nearest warning or expiry, `lagMs` after it: a node that
   * did not commit the board's last change arms a backup timer that lags, so the node that did
   * acts first and the nodes do not race for every deadline.
   */
  plan(actor: BoardActor, board: Board, lagMs = 0): void {
    const existing = this.timers.get(actor.boardId);
    if (existing) clearTimeout(existing.timer);
    this.timers.delete(actor.boardId);
    let at: number | null = null;
    for (const item of Object.values(board.items)) {
      const lease = item.life.lease;
      if (!lease) continue;
      const warnAt = lease.expiresAt - lease.ttlMs * WARN_AT_REMAINING;
      const next = this.warned.has(lease.leaseId) || warnAt >= lease.expiresAt ? lease.expiresAt : warnAt;
      if (at === null || next < at) at = next;
    }
    if (at === null) return;
    at += lagMs;
    const timer = setTimeout(() => void this.fire(actor, board), Math.max(0, at - this.clock()));
    timer.unref();
    this.timers.set(actor.boardId, { timer, at });
  }

  stopAll(): void {
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async fire(actor: BoardActor, board: Board): Promise<void> {
    this.timers.delete(actor.boardId);
    const now = this.clock();
    for (const item of Object.values(board.items)) {
      const lease = item.life.lease;
      if (!lease || this.warned.has(lease.leaseId) || now < lease.expiresAt - lease.ttlMs * WARN_AT_REMAINING) continue;
      this.warned.add(lease.leaseId);
      if (now < lease.expiresAt) for (const l of this.warningListeners) l(actor.boardId, { workId: item.workId, holder: lease.holder, expiresAt: lease.expiresAt });
    }
    try {
      await actor.ask(expireDue());
      this.plan(actor, (await actor.read()).board);
    } catch {
      // The sweep re-plans the board on its next pass.
    }
  }
}
