// Boards on LMDB: the header is a document like any other; each item is an entry of its own
// ([boardId, workId] → { v, item }, item null once removed), all written in the commit's one
// transaction. Loading reads the board's key range. What changed after a version is read from the
// same range, by each entry's v: one process holds the directory and every commit there goes
// through its board's actor, so an actor is behind only after an import or a failed copy to the
// log, and no index of versions is kept up on every commit for it.
import type { Database } from 'lmdb';
import type {
  BoardChanges,
  BoardCollection,
  BoardRecord,
  Changes,
  CommitOptions,
  EventRecord,
  ItemWrites,
  LoadedBoard,
  StoredItem,
} from '../ports/store.js';
import { HIGH } from './plan.js';
import { LmdbCollection, type CollectionDbs, type Key, type Row } from './lmdb-collection.js';
import type { Writer } from './writer.js';

/** Boards whose versions are kept between writes; past it they are all read afresh. */
const VERSIONS_KEPT = 10_000;

interface Entry {
  v: number;
  item: StoredItem | null;
}

export interface BoardDbs {
  items: Database<Entry, Key>;
  /** The index of versions earlier versions kept ([boardId, v, workId]): emptied at open, no longer written. */
  versions: Database<true, Key>;
}

export class LmdbBoards extends LmdbCollection<BoardRecord> implements BoardCollection {
  /** A commit's events go to the log in its own transaction: one LMDB environment holds both. */
  readonly logsInCommit = true;
  /** lmdb-js runs queued transactions in order, one process holds the directory, and `after` is checked. */
  readonly writesInOrder = true;

  /**
   * Versions read while no write was under way, each with the writer's mark then: they stand until
   * the next write (Writer.quiet), so a fleet polling a quiet board costs no read of the store.
   */
  private readonly versions = new Map<string, { version: number | null; mark: number }>();

  constructor(
    dbs: CollectionDbs,
    writer: Writer,
    private readonly boardDbs: BoardDbs,
    private readonly log: LmdbCollection<EventRecord>,
  ) {
    super('boards', dbs, writer);
  }

  override versionOf(id: string): number | null {
    this.writer.check();
    const mark = this.writer.quiet;
    const known = this.versions.get(id);
    if (known !== undefined && known.mark === mark) return known.version;
    const version = super.versionOf(id);
    if (mark !== null) {
      if (this.versions.size >= VERSIONS_KEPT) this.versions.clear();
      this.versions.set(id, { version, mark });
    }
    return version;
  }

  async load(id: string): Promise<LoadedBoard | null> {
    this.writer.check();
    // Read in one turn of the event loop: lmdb-js keeps one read snapshot for it.
    const record = this.dbs.docs.get(id) as BoardRecord | undefined;
    if (!record) return null;
    const items: StoredItem[] = [];
    for (const { value } of this.boardDbs.items.getRange({ start: [id], end: [id, HIGH] }))
      if (value.item) items.push(value.item);
    return { record, items };
  }

  async changesSince(id: string, version: number): Promise<BoardChanges | null> {
    this.writer.check();
    // Read in one turn of the event loop, like load: one snapshot.
    const record = this.dbs.docs.get(id) as BoardRecord | undefined;
    if (!record) return null;
    const items: StoredItem[] = [];
    const removed: string[] = [];
    for (const { key, value } of this.boardDbs.items.getRange({ start: [id], end: [id, HIGH] })) {
      if (value.v <= version) continue;
      if (value.item) items.push(value.item);
      else removed.push((key as Key)[1] as string);
    }
    return { record, items, removed };
  }

  /** Empties the index of versions earlier versions kept (nothing reads it now); says whether there was one. */
  async dropVersionIndex(): Promise<boolean> {
    if (this.boardDbs.versions.getKeysCount({ limit: 1 }) === 0) return false;
    await this.boardDbs.versions.clearAsync();
    return true;
  }

  commit(
    id: string,
    expectedVersion: number,
    set: Changes<BoardRecord>,
    writes: ItemWrites,
    log: readonly EventRecord[] = [],
    { applied, after }: CommitOptions = {},
  ): Promise<boolean> {
    // Not copied: the caller leaves them as they are until this resolves (the port says so), and
    // LMDB encodes them inside the transaction. A structured clone here was a tenth of a commit.
    return this.writer.write(() => {
      // lmdb-js runs this on the main thread while its writer waits, then syncs without it.
      if (applied) queueMicrotask(applied);
      const current = this.dbs.docs.get(id);
      if (!current || current.version !== expectedVersion || (after !== undefined && current.commitId !== after))
        return false;
      const v = expectedVersion + 1;
      for (const item of writes.put) this.putEntry(id, item.workId, { v, item });
      for (const workId of writes.removed)
        if (this.boardDbs.items.get([id, workId])?.item) this.putEntry(id, workId, { v, item: null });
      this.store({ ...current, ...set, version: v }, current);
      // The log holds no event past the header's lastSeq (commits write there, lastSeq only grows,
      // and an import writes a new board's log before its first commit, which then refuses any
      // other): this commit's own events are written without looking for them first.
      const logged = current.lastSeq as number;
      const isNew = (e: EventRecord) => e.boardId === id && e.seq > logged;
      if (log.every(isNew)) this.log.insertNewWithin(log);
      else this.log.insertMissingWithin(log);
      return true;
    });
  }

  /** Moves a board kept in the layout of earlier versions (`old`: [boardId, workId] → item) to entries of their own, one board per transaction. */
  async migrate(old: Database<StoredItem, Key>): Promise<number> {
    let boards = 0;
    for (let next = firstBoard(old); next !== null; next = firstBoard(old)) {
      const id = next;
      await this.writer.write(() => {
        const version = (this.dbs.docs.get(id)?.version as number | undefined) ?? 0;
        for (const { key, value } of old.getRange({ start: [id], end: [id, HIGH] })) {
          if (version) this.putEntry(id, key[1] as string, { v: version, item: value });
          old.remove(key);
        }
      });
      boards++;
    }
    return boards;
  }

  protected override remove(row: Row): void {
    super.remove(row);
    const id = row._id as string;
    for (const key of this.boardDbs.items.getKeys({ start: [id], end: [id, HIGH] })) this.boardDbs.items.remove(key);
  }

  /** Writes one item's entry (inside a write). */
  private putEntry(id: string, workId: string, entry: Entry): void {
    this.boardDbs.items.put([id, workId], entry);
  }
}

function firstBoard(old: Database<StoredItem, Key>): string | null {
  for (const key of old.getKeys({ limit: 1 })) return (key as Key)[0] as string;
  return null;
}
