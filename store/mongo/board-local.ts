// What this process knows of each board's item log on MongoDB (store/mongo/mongo-boards.ts): the
// version it knows the log holds, its commits whose log inserts have not landed, and what those
// commits superseded; kept for the boards used last.
import type { ItemWrites } from '../ports/store.js';

/**
 * Boards whose log state this process keeps, the most recently used. Forgetting one is safe: its
 * next commit reads the header and finishes the intent before it (finish); superseded versions it
 * had marked wait for the board's next whole load to be found again.
 */
const LOCAL_KEPT = 2000;

/** Commits whose item versions are inserted together, in one insert. */
export interface Batch {
  versions: Map<number, ItemWrites>;
  entries: number;
  done: Promise<void>;
  settle: (error?: unknown) => void;
  /** Its insert at its deadline, unless it started before. */
  timer: NodeJS.Timeout;
  started: boolean;
}

/** What this process knows of one board's item log. */
export interface Local {
  /**
   * The header version whose writes this process knows: every version up to it is in the log or in
   * `unapplied` (this process committed it, or read its header and put its intent into the log).
   * -1 when not known (a log insert failed): the next commit reads the header first.
   */
  known: number;
  /** This process's commits whose log inserts have not landed yet, by version: the next commit carries them. */
  unapplied: Map<number, ItemWrites>;
  /** This process's log inserts under way, which a commit over another's header, or a carry too large, awaits. */
  pending: Promise<void>;
  /** Commits whose item versions wait to be inserted together (see insertLater). */
  batch: Batch | null;
  /** Deleting what commits superseded (item versions, replaced parts): off the commit path, one at a time. */
  cleanup: Promise<void>;
  /** When this board's replaced parts were last deleted. */
  partsDroppedAt: number;
  /** Whether the intent the next commit replaces was staged (or parts of older ones may be left). */
  staged: boolean;
  /** Commits that replaced a staged intent, and when: the parts below `v` go once a reader mid-way is done with them. */
  replaced: { v: number; at: number }[];
  /** The version (and its id) each work id holds in the log, once a whole load told us (for deleting superseded ones). */
  versions: Map<string, { v: number; id: string }> | null;
  /** Superseded versions in the log and when they were found so, oldest first (they go GC_GRACE_MS later). */
  garbage: { id: string; at: number }[];
}

/** Each board's Local, the most recently used LOCAL_KEPT of them. */
export class LocalStates {
  private readonly boards = new Map<string, Local>();

  /** The board's state, made fresh when this process knows nothing of it (or forgot it). */
  of(id: string): Local {
    const local = this.boards.get(id) ?? {
      known: -1,
      unapplied: new Map(),
      pending: Promise.resolve(),
      batch: null,
      cleanup: Promise.resolve(),
      partsDroppedAt: 0,
      staged: false,
      replaced: [],
      versions: null,
      garbage: [],
    };
    this.boards.delete(id);
    this.boards.set(id, local); // the map's order is the order of use
    if (this.boards.size > LOCAL_KEPT) this.boards.delete(this.boards.keys().next().value!);
    return local;
  }

  /** The board's state if this process keeps one (not counted as a use). */
  get(id: string): Local | undefined {
    return this.boards.get(id);
  }

  delete(id: string): void {
    this.boards.delete(id);
  }

  ids(): IterableIterator<string> {
    return this.boards.keys();
  }

  all(): IterableIterator<Local> {
    return this.boards.values();
  }
}
