// One timer per board, set for its nearest lease event read from the board's deadline indexes:
// the next warning (20% of a lease's time left) or the next expiry. When it fires, every warning
// due is told to listeners and every lease due expires in one command, decided where the board's
// commands are (its home), committed once with the version check, with no read of the whole board.
import type { Board } from '../machines/board.js';
import { nextExpiry } from '../machines/board-queries.js';
import type { BoardActor } from './board-actor.js';

export type WarningListener = (boardId: string, warning: { workId: string; holder: string; expiresAt: number }) => void;

export class LeaseScheduler {
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; at: number }>();
  /** Per board, the time up to which warnings were told (each lease's warning is told once). */
  private readonly warnedUntil = new Map<string, number>();
  private readonly warningListeners = new Set<WarningListener>();

  constructor(
    private readonly clock: () => number,
    /** Expires the board's due leases in one command (through the board's home). */
    private readonly expire: (boardId: string) => Promise<unknown>,
  ) {}

  onWarning(listener: WarningListener): void {
    this.warningListeners.add(listener);
  }

  /** Boards with an expiry timer armed here. */
  get size(): number {
    return this.timers.size;
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
    const warnedUntil = this.warnedUntil.get(actor.boardId) ?? -Infinity;
    const warning = board.index.warnings.nextHigherKey([warnedUntil, '\uffff'])?.[0] ?? null;
    const expiry = nextExpiry(board);
    if (warning === null && expiry === null) {
      this.warnedUntil.delete(actor.boardId);
      return;
    }
    const at = Math.min(warning ?? Infinity, expiry ?? Infinity) + lagMs;
    const timer = setTimeout(() => void this.fire(actor), Math.max(0, at - this.clock()));
    timer.unref();
    this.timers.set(actor.boardId, { timer, at });
  }

  /** Fires the board's timer now if the clock has passed its time (a stalled loop or a clock step). */
  fireIfDue(actor: BoardActor): boolean {
    const planned = this.timers.get(actor.boardId);
    if (!planned || planned.at > this.clock()) return false;
    clearTimeout(planned.timer);
    void this.fire(actor);
    return true;
  }

  stopAll(): void {
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async fire(actor: BoardActor): Promise<void> {
    this.timers.delete(actor.boardId);
    const now = this.clock();
    try {
      const { board } = await actor.read();
      const from = this.warnedUntil.get(actor.boardId) ?? -Infinity;
      board.index.warnings.forRange([from, '\uffff'], [now, '\uffff'], true, (_key, workId) => {
        const lease = board.items.get(workId)!.life.lease!;
        if (now < lease.expiresAt)
          for (const l of this.warningListeners)
            l(actor.boardId, { workId, holder: lease.holder, expiresAt: lease.expiresAt });
      });
      this.warnedUntil.set(actor.boardId, now);
      const due = nextExpiry(board);
      if (due !== null && due <= now) await this.expire(actor.boardId);
      this.plan(actor, actor.held?.board ?? board);
    } catch {
      // The sweep plans the board again on its next pass.
    }
  }
}
