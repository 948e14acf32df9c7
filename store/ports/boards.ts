// The boards port: a board is a header (its version is the commit point every node checks, with
// the counters, aggregates and outbox) and its entries kept apart (each an item, a doctrine entry
// or a spec clause), each carrying the board version that last wrote it. A commit costs what it changes; a board has no size ceiling; a reader never
// sees half of a commit; a node that is behind reads only what changed since the version it holds.
import type { Changes, Collection } from './collection.js';
import type { BoardRecord, EventRecord } from './records.js';

/**
 * An entry as the store keeps it: an item, a doctrine entry or a spec clause. The store reads only
 * its key, `workId`: a work id `W-<n>` for an item, `doctrine:<slug>` or `spec:S-<n>` for the others.
 */
export interface StoredItem {
  readonly workId: string;
}

/** What one commit does to the entries: written whole, or taken off the board (by key). */
export interface ItemWrites {
  put: readonly StoredItem[];
  removed: readonly string[];
}

export interface LoadedBoard {
  record: BoardRecord;
  items: StoredItem[];
}

/** What changed after some version: entries written since (whole) and keys removed since. */
export interface BoardChanges {
  record: BoardRecord;
  items: StoredItem[];
  removed: string[];
}

/**
 * The header collection with the items beside it. `get`, `find`, `select` and `update` see the
 * header alone; `insert` makes a board with no items; `delete` and `deleteMany` take the items
 * with the header.
 */
export interface BoardCollection extends Collection<BoardRecord> {
  /** The header and every entry as one commit left them, or null when there is no such board. */
  load(id: string): Promise<LoadedBoard | null>;
  /** The header and what changed after `version` (through an index on board and version), or null when there is no such board. */
  changesSince(id: string, version: number): Promise<BoardChanges | null>;
  /**
   * One commit, only when the stored version is `expectedVersion`: the header's `set` and the
   * items' writes land together or not at all, and the version moves to `expectedVersion + 1`.
   * False when the board is missing or another commit came first (nothing written). The store
   * may read `set` and `items` until the call resolves: the caller does not change them meanwhile.
   *
   * `log`, only where `logsInCommit`: events appended to the event log in the same transaction
   * (those already there skipped, as `insertMissing` does), so the header need not carry them in
   * its outbox. A store without transactions across collections ignores it; its caller copies the
   * outbox to the log after the commit.
   */
  commit(
    id: string,
    expectedVersion: number,
    set: Changes<BoardRecord>,
    items: ItemWrites,
    log?: readonly EventRecord[],
    options?: CommitOptions,
  ): Promise<boolean>;
  /** True when `commit` writes its `log` in the same transaction (the embedded store). */
  readonly logsInCommit?: boolean;
  /**
   * True when commits started one after another are applied in that order, each seeing the one
   * before (the embedded store: one process, one writer), and `after` is checked: a commit may then
   * be started while the one it stands on is still under way.
   */
  readonly writesInOrder?: boolean;
}

export interface CommitOptions {
  /**
   * Called once what is left of the write is the store's own (syncing it, a round trip): the
   * caller may use this process meanwhile. At most once, before the commit resolves, whether it
   * lands or not; a store without such a moment need not call it.
   */
  applied?: () => void;
  /** Where `writesInOrder`: the commit lands only on the header the commit with this `commitId` wrote, besides the version check. */
  after?: string;
}

/** A new board's header, as it is inserted before its first commit (`version` 1 unless given). */
export const newBoardRecord = (boardId: string, version = 1): BoardRecord => ({
  _id: boardId,
  version,
  nextWorkSeq: 1,
  nextFencingToken: 1,
  lastSeq: 0,
  nextDeadline: null,
});
