// The board actors of this node: activated on demand, passivated when idle and holding no lease,
// and woken by a sweep for boards whose lease deadline is near, so expiry fires with no request
// arriving, after a restart, and on whichever node sweeps first (the version check makes it once).
import {
  BoardActor,
  type BoardListener,
  type BoardPorts,
  type Committed,
  type CommittedEvent,
  type Currency,
} from './board-actor.js';
import { LeaseScheduler, type WarningListener } from './lease-scheduler.js';
import { expireDue } from '../machines/lease-commands.js';
import type { BoardRecord, Filter } from '../store/ports/store.js';

export interface RegistryOptions {
  clock: () => number;
  /** Idle actors with no lease are dropped after this long. */
  idleMs?: number;
  /** How often to look for boards with due leases. */
  sweepMs?: number;
  /** Told when a lease has 20% left (the bus carries it to the holder's sockets). */
  onWarning?: WarningListener;
  /** Told of every committed batch, after it is in the log (the bus publishes it). */
  onCommit?: (boardId: string, events: CommittedEvent[]) => void;
  /** Told when something listening to commits threw (the command was committed all the same). */
  onListenerError?: (error: unknown) => void;
  /** Told of the board as a quiet spell left it, when a commit ends the spell (restore points). */
  onQuiet?: (boardId: string, before: Committed) => void;
  /**
   * Expires the board's due leases in one command where its commands are decided (the board's
   * home node when there are several); by default in this node's actor.
   */
  expire?: (boardId: string) => Promise<unknown>;
  /** When a held board is known to be the latest without asking the store (board-actor.ts); by default always (one node alone on its store). */
  currency?: Currency;
}

/**
 * The boards whose nearest lease deadline is due within a second of `now`. Bounded below: a board
 * with no deadline (null, every idle board) sorts first in the deadline index, and an open lower
 * end read all of those on every sweep (10,000 boards: 14-34 ms of the event loop twice a second).
 */
export const dueSoon = (now: number): Filter<BoardRecord> => ({ nextDeadline: { $gte: 0, $lte: now + 1000 } });

/** How far behind the deadline a node that did not commit the board's last change acts on it. */
export const BACKUP_LAG_MS = 250;

export class BoardRegistry {
  private readonly actors = new Map<string, BoardActor>();
  private readonly scheduler: LeaseScheduler;
  private sweeper: NodeJS.Timeout | null = null;
  private readonly idleMs: number;
  /** One listener and one quiet-spell hook for every actor, not a closure per board. */
  private readonly committed: BoardListener;
  private readonly quiet: ((before: Committed, boardId: string) => void) | undefined;

  constructor(
    private readonly ports: BoardPorts,
    private readonly options: RegistryOptions,
  ) {
    this.idleMs = options.idleMs ?? 5 * 60_000;
    this.scheduler = new LeaseScheduler(
      options.clock,
      options.expire ?? ((boardId) => this.get(boardId).ask(expireDue())),
    );
    if (options.onWarning) this.scheduler.onWarning(options.onWarning);
    this.committed = (events, board, actor) => {
      this.scheduler.plan(actor, board);
      this.options.onCommit?.(actor.boardId, events);
    };
    const onQuiet = options.onQuiet;
    this.quiet = onQuiet && ((before, boardId) => onQuiet(boardId, before));
  }

  get(boardId: string): BoardActor {
    let actor = this.actors.get(boardId);
    if (!actor) {
      actor = new BoardActor(
        boardId,
        this.ports,
        this.options.clock,
        this.options.onListenerError,
        this.quiet,
        this.options.currency,
      );
      actor.subscribe(this.committed);
      this.actors.set(boardId, actor);
    }
    return actor;
  }

  /** Starts the periodic sweep for due leases and idle actors. */
  start(): void {
    const every = this.options.sweepMs ?? 500;
    this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), every);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.scheduler.stopAll();
    this.actors.clear();
  }

  /** Events seen on the bus: an active actor holding an older board drops its cache. */
  saw(boardId: string, seq: number): void {
    this.actors.get(boardId)?.saw(seq);
  }

  /** Whether this node holds the board loaded (another node's commit makes it stale). */
  holds(boardId: string): boolean {
    return this.actors.get(boardId)?.loaded ?? false;
  }

  /** Whether the board's actor is active on this node (not passivated). */
  has(boardId: string): boolean {
    return this.actors.has(boardId);
  }

  get size(): number {
    return this.actors.size;
  }

  /** Commands waiting in this node's mailboxes, behind the commits under way. */
  get waiting(): number {
    let waiting = 0;
    for (const actor of this.actors.values()) waiting += actor.waiting;
    return waiting;
  }

  /** Boards with a lease expiry timer armed on this node. */
  get leaseTimers(): number {
    return this.scheduler.size;
  }

  private async sweep(): Promise<void> {
    const now = this.options.clock();
    const due = await this.ports.boards.select(dueSoon(now), ['nextDeadline'], { limit: 1000 });
    for (const { _id } of due) {
      // A timer this node armed is trusted until the clock passes its time; then (a clock step,
      // a stalled event loop) it fires at once rather than being armed again later.
      const planned = this.scheduler.plannedAt(_id);
      if (planned !== null && planned > now) continue;
      const actor = this.get(_id);
      if (this.scheduler.fireIfDue(actor)) continue;
      const { board } = await actor.read();
      this.scheduler.plan(actor, board, BACKUP_LAG_MS);
    }
    for (const [id, actor] of this.actors) {
      if (actor.idle && !this.scheduler.has(id) && now - actor.lastUsed > this.idleMs) this.actors.delete(id);
    }
  }
}
