// Boards on LMDB: the header is a document like any other; each item is an entry of its own
// ([boardId, workId] → { v, item }, item null once removed), all written in the commit's one
// transaction. Loading reads the board's key range. What changed after a version is read from the
// same range, by each entry's v: one process holds the directory and every commit there goes
// through its board's actor, so an actor is behind only after an import or a failed copy to the
// log, and no index of versions is kept up on every commit for it.
// A commit is queued on LMDB's write thread (lmdb-js's asynchronous writes) inside a block the
// thread checks first, the header still at the expected version: the main thread encodes, LMDB's
// thread puts, compresses and syncs, and the whole block lands or none of it (issue 46). Every
// value is encoded and every key checked before the block is opened (ready-writes.ts): a throw
// while it is being queued would leave what was queued before it to land.
import { IF_EXISTS, getLastVersion, type Database } from 'lmdb';
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
import { DIRECT, ReadyWrites, type Writes } from './ready-writes.js';
import type { Writer } from './writer.js';

/** Boards whose versions are kept between writes; past it they are all read afresh. */
const VERSIONS_KEPT = 10_000;
/** Boards whose last header written is kept (the busy ones); past it they are all read afresh. */
const HEADERS_KEPT = 1_000;

interface Entry {
  v: number;
  item: StoredItem | null;
}

export interface BoardDbs {
  items: Database<Entry, Key>;
  /** The index of versions earlier versions kept ([boardId, v, workId]): emptied at open, no longer written. */
  versions: Database<true, Key>;
  /** [boardId, commitId] of each board's last commit: a commit standing on another lands only where it is. */
  commits: Database<true, Key>;
}

export class LmdbBoards extends LmdbCollection<BoardRecord> implements BoardCollection {
  /** A commit's events go to the log in its own transaction: one LMDB environment holds both. */
  readonly logsInCommit = true;
  /** lmdb-js applies queued writes in order, one process holds the directory, and `after` is checked. */
  readonly writesInOrder = true;

  /**
   * Versions read while no write was under way, each with the writer's mark then: they stand until
   * the next write (Writer.quiet), so a fleet polling a quiet board costs no read of the store.
   */
  private readonly versions = new Map<string, { version: number | null; mark: number }>();
  /** Headers of commits queued and not landed yet, the last per board. */
  private readonly inFlight = new Map<string, { row: Row }>();
  /**
   * The header each board's last commit here wrote, read again only once the store holds another
   * version (decoding it was a fifth of a commit's main-thread work). Every write of a header moves
   * its version but an insert after a delete, which `remove` forgets it for.
   */
  private readonly written = new Map<string, Row>();

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
    // they are encoded before this returns.
    const current = this.writer.healthy ? this.expected(id, expectedVersion) : undefined;
    const logged = current?.lastSeq as number;
    if (current && !log.every((e) => e.boardId === id && e.seq > logged))
      return this.commitInTransaction(id, expectedVersion, set, writes, log, applied, after);
    return this.writer.queued(() => {
      if (!current || current.version !== expectedVersion || (after !== undefined && current.commitId !== after)) {
        if (applied) queueMicrotask(applied);
        return Promise.resolve(false);
      }
      const row = { ...current, ...set, version: expectedVersion + 1 };
      // Whatever can throw does so here, before anything is queued.
      const ready = new ReadyWrites();
      this.writeCommit(id, current, row, writes, log, true, ready);
      if (after !== undefined) ready.check(this.boardDbs.commits, [id, after]);
      let marked: Promise<boolean> | undefined;
      // Checked again on the write thread, in order with every write queued before: the header still
      // at the version read here, and, for a commit standing on another, that one landed.
      const landing = this.dbs.docs.ifVersion(id, expectedVersion, () => {
        if (after === undefined) ready.queue();
        else marked = this.boardDbs.commits.ifVersion([id, after], IF_EXISTS, () => ready.queue());
      });
      // Both settle together; the inner block's says whether the writes landed.
      if (marked) landing.catch(() => undefined);
      const landed = marked ?? landing;
      this.expect(id, row, landed);
      // What is left is the write thread's: the caller may decide its next commit on this one.
      if (applied) queueMicrotask(applied);
      return landed;
    });
  }

  /** A commit whose log may hold events already there: they are looked for inside the transaction. */
  private commitInTransaction(
    id: string,
    expectedVersion: number,
    set: Changes<BoardRecord>,
    writes: ItemWrites,
    log: readonly EventRecord[],
    applied: (() => void) | undefined,
    after: string | undefined,
  ): Promise<boolean> {
    let landed!: (value: boolean) => void;
    const landing = new Promise<boolean>((resolve) => (landed = resolve));
    const done = this.writer.write(() => {
      // lmdb-js runs this on the main thread while its writer waits, then syncs without it.
      if (applied) queueMicrotask(applied);
      const current = this.stored(id, expectedVersion);
      if (!current || current.version !== expectedVersion || (after !== undefined && current.commitId !== after))
        return false;
      const row = { ...current, ...set, version: expectedVersion + 1 };
      this.expect(id, row, landing);
      this.writeCommit(id, current, row, writes, [], false);
      const isNew = (e: EventRecord) => e.boardId === id && e.seq > (current.lastSeq as number);
      if (log.every(isNew)) this.log.insertNewWithin(log);
      else this.log.insertMissingWithin(log);
      return true;
    });
    done.then(landed, () => landed(false));
    return done;
  }

  /**
   * The header as the last commit queued leaves it, else as stored: the one this process last wrote
   * while the store still holds its version (`version`, the one the caller expects), else read.
   */
  private expected(id: string, version: number): Row | undefined {
    return this.inFlight.get(id)?.row ?? this.stored(id, version);
  }

  /** The header as stored (inside a transaction: as it leaves it), the one last written here while its version is `version`. */
  private stored(id: string, version: number): Row | undefined {
    const kept = this.written.get(id);
    if (kept?.version === version && this.dbs.docs.getBinaryFast(id) !== undefined && getLastVersion() === version)
      return kept;
    return this.dbs.docs.get(id);
  }

  /** Keeps `row` as what board `id` holds once `landed` resolves (a commit queued on it stands on it). */
  private expect(id: string, row: Row, landed: Promise<boolean>): void {
    const queued = { row };
    this.inFlight.set(id, queued);
    const forget = (ok: boolean) => {
      if (this.inFlight.get(id) === queued) this.inFlight.delete(id);
      if (!ok) return void this.written.delete(id);
      if (this.written.size >= HEADERS_KEPT) this.written.clear();
      this.written.set(id, row);
    };
    landed.then(forget, () => forget(false));
  }

  /**
   * A commit's writes, inside a transaction, or made ready for a block queued (`to`), that checked
   * the header is `current`: the header as `row`, its entries, its events, and the mark a commit
   * standing on it looks for. `unsure`: queued, so an entry may be on its way unseen: a removal is
   * written whatever is stored.
   */
  private writeCommit(
    id: string,
    current: Row,
    row: Row,
    writes: ItemWrites,
    log: readonly EventRecord[],
    unsure: boolean,
    to: Writes = DIRECT,
  ): void {
    const v = row.version as number;
    const { items, commits } = this.boardDbs;
    for (const item of writes.put) to.put(items, [id, item.workId], { v, item });
    for (const workId of writes.removed)
      if (unsure || items.get([id, workId])?.item) to.put(items, [id, workId], { v, item: null });
    this.store(row, current, to);
    if (typeof current.commitId === 'string') to.remove(commits, [id, current.commitId]);
    if (typeof row.commitId === 'string') to.put(commits, [id, row.commitId], true);
    // The log holds no event past the header's lastSeq (commits write there, lastSeq only grows,
    // and an import writes a new board's log before its first commit, which then refuses any
    // other): this commit's own events are written without looking for them first.
    this.log.insertNewWithin(log, to);
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
    this.written.delete(id);
    for (const key of this.boardDbs.items.getKeys({ start: [id], end: [id, HIGH] })) this.boardDbs.items.remove(key);
    for (const key of this.boardDbs.commits.getKeys({ start: [id], end: [id, HIGH] }))
      this.boardDbs.commits.remove(key);
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
