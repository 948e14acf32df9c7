// Boards on MongoDB, without multi-document transactions: a header document per board (version,
// counters, aggregates) and an insert-only log of item versions beside it, one document per item
// and board version that wrote it, read by `_id` range (see logRange).
//
// A commit is one version-checked update of the header that carries the commit's intent: what it
// wrote (the changed items and its events, the board's outbox) inline when small, or a reference
// to parts staged just before it. That update is the commit point. The intent's item versions are
// inserted next (idempotent: a version's id is fixed, and inserting it twice changes nothing), off
// the committer's path: the next commit does not wait for them, but carries in its own intent the
// item writes of every earlier commit not yet known to be in the log (while they fit inline; else it
// waits for them). So a header at version H holds, in its intent, every version below H that may
// not be in the log yet, and a reader that takes the header, then the log up to H, overlays H's
// intent and what it carries. Whoever commits over a header another process wrote first puts its
// intent and carried writes into the log. Commits landing meanwhile do not disturb it: what they supersede
// (item versions, a replaced intent's staged parts) stays for a grace period, so a busy board is
// read in one try; it reads again only when it was slower than that. The intent stays until the
// next commit replaces it, so the outbox of the last commit is readable as long as the port
// promises. What was superseded is deleted by the node that commits the board.
import { randomUUID } from 'node:crypto';
import type { Collection as Driver, Document } from 'mongodb';
import {
  ContentionError,
  SCHEMA,
  type BoardChanges,
  type BoardCollection,
  type BoardRecord,
  type Changes,
  type Filter,
  type FindOptions,
  type ItemWrites,
  type LoadedBoard,
  type Selected,
  itemVersionId,
} from '../ports/store.js';
import { afterThisTurn } from '../ports/maybe.js';
import {
  carriedBy,
  liveCount,
  packedIfFits,
  recordOf,
  unpacked,
  type HeaderDoc,
  type Inline,
  type Intent,
  type Packed,
  type ReadHeader,
  type Staged,
  type Written,
} from './board-intent.js';
import { LocalStates, type Batch, type Local } from './board-local.js';
import { docsOf, ItemLog, type ItemDoc } from './item-log.js';
import { MongoCollection } from './mongo-collection.js';
import { StagedParts } from './staged-parts.js';

/**
 * Item versions of consecutive commits are inserted together once they hold this many entries, or
 * APPLY_DELAY_MS after the first (carried meanwhile by each next commit's intent): one agent's
 * claim → submit on FerretDB 2 (DURABLE=1) waited about 2 ms on an insert per commit, each its own
 * durable transaction beside the next commit's update. A busy board's group commits fill a batch each.
 */
const APPLY_BATCH_ENTRIES = 8;
const APPLY_DELAY_MS = 20;
/** A superseded item version is deleted this long after it was superseded, so a reader that is mid-way still finds it. */
export const GC_GRACE_MS = 60_000;
/** Likewise a replaced intent's staged parts: a reader takes the header, then the log, then the parts. */
export const PARTS_GRACE_MS = 10_000;
const GC_BATCH = 500;
/**
 * A board's replaced parts are deleted at most this often, together: one delete for the parts of
 * many commits, off the commits' path.
 */
const PARTS_DROP_EVERY_MS = PARTS_GRACE_MS / 2;
const READ_ATTEMPTS = 8;
export class MongoBoards extends MongoCollection<BoardRecord> implements BoardCollection {
  private readonly local = new LocalStates();
  /** The item versions, beside the headers. */
  private readonly items: ItemLog;
  /** Intents too large for the header, staged beside it. */
  private readonly parts: StagedParts;
  /** Set by close: commits' clean-ups are skipped from then on. */
  private closing = false;

  constructor(
    headers: Driver<Document>,
    log: Driver<Document>,
    staging: Driver<Document>,
    private readonly clock: () => number = Date.now,
  ) {
    super('boards', SCHEMA.boards, headers, ['layout', 'intent', 'items']);
    this.items = new ItemLog(
      log,
      (op) => this.run(op),
      (call) => this.track(call),
    );
    this.parts = new StagedParts(staging, (op) => this.run(op), clock);
  }

  override insert(doc: BoardRecord): Promise<void> {
    return super.insert({ ...doc, layout: 2, intent: null } as BoardRecord);
  }

  override async get(id: string): Promise<BoardRecord | null> {
    return (await this.find({ _id: id }))[0] ?? null;
  }

  override async findOne(filter: Filter<BoardRecord>): Promise<BoardRecord | null> {
    return (await this.find(filter, { limit: 1 }))[0] ?? null;
  }

  override async find(filter: Filter<BoardRecord>, options: FindOptions<BoardRecord> = {}): Promise<BoardRecord[]> {
    const headers = (await this.read(filter, { items: 0 }, options)) as HeaderDoc[];
    return Promise.all(headers.map(unpacked).map(async (h) => recordOf(h, await this.writtenAt(h))));
  }

  /** The outbox, when asked for, is read from the intent that holds it. */
  override async select<K extends keyof BoardRecord & string>(
    filter: Filter<BoardRecord>,
    fields: readonly K[],
    options: FindOptions<BoardRecord> = {},
  ): Promise<Selected<BoardRecord, K>[]> {
    if (!fields.includes('outbox' as K)) return super.select(filter, fields, options);
    const rows = await super.select(filter, [...fields, 'version', 'intent' as K], options);
    return Promise.all(
      rows.map(async (row) => {
        const header = unpacked(row as unknown as HeaderDoc);
        const record = recordOf(header, await this.writtenAt(header)) as unknown as Record<string, unknown>;
        return Object.fromEntries(['_id', ...fields].filter((f) => f in record).map((f) => [f, record[f]])) as Selected<
          BoardRecord,
          K
        >;
      }),
    );
  }

  override async delete(id: string, expectedVersion?: number): Promise<boolean> {
    const gone = await super.delete(id, expectedVersion);
    if (gone) {
      // The header went first: the board is gone for every reader; its log and parts follow, once
      // this process's inserts to its log (and their clean-ups) are done, or they would come back.
      const local = this.local.get(id);
      if (local) {
        this.insertWaiting(id);
        await Promise.all([local.pending, local.cleanup]);
      }
      this.local.delete(id);
      await this.items.dropBoard(id);
      await this.parts.dropBoard(id);
    }
    return gone;
  }

  override async deleteMany(filter: Filter<BoardRecord>): Promise<number> {
    let deleted = 0;
    for (const { _id } of await super.select(filter, ['version'])) if (await this.delete(_id)) deleted++;
    return deleted;
  }

  async load(id: string): Promise<LoadedBoard | null> {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const header = await this.header(id);
      if (!header) return null;
      // The whole board, under ids of either shape: versions an earlier version of this adapter wrote
      // stay under `<board>:<work id>:<v>` until superseded (changesSince never needs them: see there).
      const docs = await this.items.read(id, -1, header.version);
      const read = await this.settle(header, docs, 0);
      if (!read) continue;
      const items = [...read.latest.values()].flatMap((d) => (d.item ? [d.item] : []));
      const expected = liveCount(header);
      if (expected !== null && items.length !== expected) continue; // a version superseded meanwhile: read again
      await this.adopt(id, header, read.written);
      const local = this.local.of(id);
      local.versions = new Map([...read.latest.values()].map((d) => [d.workId, { v: d.v, id: d._id }]));
      const now = this.clock();
      for (const doc of docs)
        if (doc.v < (read.latest.get(doc.workId)?.v ?? 0)) local.garbage.push({ id: doc._id, at: now });
      return { record: recordOf(header, read.written), items };
    }
    throw new ContentionError('boards', id);
  }

  async changesSince(id: string, version: number): Promise<BoardChanges | null> {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const header = await this.header(id);
      if (!header) return null;
      if (header.version === version)
        return { record: recordOf(header, await this.writtenAt(header)), items: [], removed: [] };
      // Only ids of this shape: `version` is one this process loaded or read since, and every version
      // after it was written by a node of this version (docs/operating.md: no node of an earlier one beside it).
      const docs = await this.items.read(id, version, header.version);
      const read = await this.settle(header, docs, version);
      if (!read) continue;
      await this.adopt(id, header, read.written);
      const versions = this.local.of(id).versions;
      for (const d of read.latest.values()) versions?.set(d.workId, { v: d.v, id: d._id });
      const changed = [...read.latest.values()];
      return {
        record: recordOf(header, read.written),
        items: changed.flatMap((d) => (d.item ? [d.item] : [])),
        removed: changed.filter((d) => !d.item).map((d) => d.workId),
      };
    }
    throw new ContentionError('boards', id);
  }

  async commit(id: string, expectedVersion: number, set: Changes<BoardRecord>, writes: ItemWrites): Promise<boolean> {
    const local = this.local.of(id);
    if (local.known !== expectedVersion) await this.catchUpWith(id, expectedVersion);
    const v = expectedVersion + 1;
    const { outbox, ...header } = set;
    const written: Written = {
      put: [...writes.put],
      removed: [...writes.removed],
      ...(outbox ? { events: outbox } : {}),
    };
    /** The intent inline, carrying what this process committed and has not seen land in the log. */
    const inline = (): Inline =>
      local.unapplied.size
        ? { v, ...written, carry: [...local.unapplied].map(([cv, w]) => ({ v: cv, put: w.put, removed: w.removed })) }
        : { v, ...written };
    let intent: Packed | Staged | null = packedIfFits(inline());
    if (local.unapplied.size && !intent) {
      // Too much to carry: wait for the log instead (the inserts are slower than the commits).
      await this.catchUpWith(id, expectedVersion, true);
      intent = packedIfFits(inline());
    }
    let stage: string | null = null;
    if (!intent) {
      if (local.unapplied.size) await this.catchUpWith(id, expectedVersion, true);
      stage = randomUUID();
      intent = { v, stage, parts: await this.parts.stage(id, v, stage, written), events: written.events !== undefined };
    }
    const result = await this.run(() =>
      this.driver.updateOne({ _id: id, version: expectedVersion } as Document, {
        $set: { ...header, intent },
        $unset: { outbox: '' },
        $inc: { version: 1 },
      }),
    );
    const landed = result.modifiedCount === 1;
    if (!landed) {
      if (stage) await this.parts.dropStage(stage).catch(() => undefined);
      return false;
    }
    // Committed. The log inserts follow off the caller's path; the next commit carries them until
    // they land, and if they fail, whoever reads or commits next finishes them from the header.
    if (local.staged) local.replaced.push({ v, at: this.clock() });
    local.staged = stage !== null;
    if (local.known === expectedVersion) local.known = v;
    local.unapplied.set(v, written);
    const applied = this.insertLater(id, local, v, written);
    local.pending = Promise.all([local.pending, applied.catch(() => undefined)]).then(() => undefined);
    // Cleaning up follows the inserts (and is skipped when they failed: what they supersede must
    // stay until the intent is in the log), but the next commit does not wait for it: on a wire
    // server a delete can take seconds, and a board whose commits queued behind it stalled with it.
    // A closing store lets the inserts finish and skips the clean-up (see close).
    local.cleanup = local.cleanup
      .then(() => applied)
      .then(() => (this.closing ? undefined : this.collect(id, v, written)))
      .then(() => (this.closing ? undefined : this.dropReplacedParts(id)))
      .catch(() => undefined);
    return true;
  }

  /**
   * The store's close: this process's log inserts land first; clean-ups not yet begun are skipped,
   * as a crash would skip them (a later load collects superseded versions).
   */
  override async close(): Promise<void> {
    this.closing = true;
    await this.settled();
    await super.close();
  }

  /** Waits for this process's log inserts and clean-ups of every board (tests, and a clean close). */
  async settled(): Promise<void> {
    for (const id of this.local.ids()) this.insertWaiting(id);
    await Promise.all([...this.local.all()].map((l) => Promise.all([l.pending, l.cleanup])));
  }

  /** The header, with a board of the earlier layout moved to this one first. */
  private async header(id: string): Promise<ReadHeader | null> {
    const header = (await this.run(() =>
      this.driver.findOne({ _id: id } as Document, { projection: { items: 0 } }),
    )) as HeaderDoc | null;
    if (!header || header.layout === 2) return header && unpacked(header);
    await this.migrate(id);
    return this.header(id);
  }

  /**
   * The latest version of each work id among `docs` as of the header's version, with the header's
   * intent (and what it carries) laid over them; null when a later commit landed meanwhile (read
   * again). The intent is the last commit's even when plain updates (the port's `update`, which
   * writes no items) moved the version past it: its writes may still be on their way to the log.
   */
  private async settle(
    header: ReadHeader,
    docs: ItemDoc[],
    since: number,
  ): Promise<{ latest: Map<string, ItemDoc>; written: Written | null } | null> {
    const latest = new Map<string, ItemDoc>();
    for (const doc of docs) {
      if (doc.v > header.version) return null;
      if ((latest.get(doc.workId)?.v ?? -1) < doc.v) latest.set(doc.workId, doc);
    }
    const intent = header.intent;
    if (!intent) return { latest, written: null };
    const written = await this.writtenOf(header._id, intent);
    if (!written) return null;
    // What it carries may be in the log already, or a later version of an item may be there.
    for (const c of carriedBy(intent))
      if (c.v > since)
        for (const doc of docsOf(header._id, c.v, c))
          if ((latest.get(doc.workId)?.v ?? -1) < doc.v) latest.set(doc.workId, doc);
    if (intent.v > since) for (const doc of docsOf(header._id, intent.v, written)) latest.set(doc.workId, doc);
    return { latest, written };
  }

  /** What the header's last commit wrote, or null when it left none (or its parts went: a later commit replaced it). */
  private async writtenAt(header: ReadHeader): Promise<Written | null> {
    return header.intent ? this.writtenOf(header._id, header.intent) : null;
  }

  /** An intent's writes: inline, or read from its parts (null when they are gone). */
  private async writtenOf(boardId: string, intent: Intent): Promise<Written | null> {
    return 'stage' in intent ? this.parts.read(boardId, intent) : intent;
  }

  /**
   * A header read here: its intent and what it carries go into the log (unless this process knows
   * that version or a later one) before this process commits over it. Then every version up to it
   * is in the log.
   */
  private async adopt(id: string, header: ReadHeader, written: Written | null): Promise<void> {
    const local = this.local.of(id);
    if (header.intent && 'stage' in header.intent) local.staged = true;
    if (local.known >= header.version) return;
    if (written && header.intent) {
      for (const c of carriedBy(header.intent)) await this.apply(id, c.v, c);
      await this.apply(id, header.intent.v, written);
    }
    if (local.known >= header.version) return; // this process committed past it meanwhile
    local.known = header.version;
    local.unapplied.clear();
  }

  /**
   * Before committing over `version`: every version up to it is in the log, or known here and
   * carried. With `drain`, this process's own inserts land first, so nothing is left to carry.
   */
  private async catchUpWith(id: string, version: number, drain = false): Promise<void> {
    const local = this.local.of(id);
    this.insertWaiting(id);
    await local.pending;
    if (drain && local.known === version && !local.unapplied.size) return;
    // A failed insert (or a header written elsewhere): read the header and finish it.
    local.known = -1;
    const header = await this.header(id);
    if (header?.version === version) await this.adopt(id, header, await this.writtenAt(header));
  }

  /**
   * Inserts a commit's item versions with those of the commits just before and after it, in one
   * insert: when the batch holds APPLY_BATCH_ENTRIES, or APPLY_DELAY_MS after its first commit, or
   * when a commit must wait for the log. Never before the turn's replies are written (the
   * encoding is not on the answer's path). Until then the next commits carry the versions.
   */
  private insertLater(id: string, local: Local, v: number, writes: ItemWrites): Promise<void> {
    let batch = local.batch;
    if (!batch) {
      let settle!: (error?: unknown) => void;
      const done = new Promise<void>((resolve, reject) => (settle = (e) => (e === undefined ? resolve() : reject(e))));
      const opened: Batch = {
        versions: new Map(),
        entries: 0,
        done,
        settle,
        timer: setTimeout(() => void this.insertBatch(id, local, opened), APPLY_DELAY_MS),
        started: false,
      };
      batch = local.batch = opened;
    }
    batch.versions.set(v, writes);
    batch.entries += writes.put.length + writes.removed.length;
    if (batch.entries >= APPLY_BATCH_ENTRIES) {
      const full = batch;
      void afterThisTurn().then(() => this.insertBatch(id, local, full));
    }
    return batch.done;
  }

  /** Inserts a batch's versions now (once; a later call finds it taken). */
  private async insertBatch(id: string, local: Local, batch: Batch): Promise<void> {
    if (local.batch === batch) local.batch = null;
    if (batch.started) return;
    batch.started = true;
    clearTimeout(batch.timer);
    try {
      await this.items.insert([...batch.versions].flatMap(([v, writes]) => docsOf(id, v, writes)));
      for (const v of batch.versions.keys()) local.unapplied.delete(v);
      batch.settle();
    } catch (error) {
      local.known = -1;
      batch.settle(error);
    }
  }

  /** The batch waiting for its insert, now: before a commit waits for the log, or a close. */
  private insertWaiting(id: string): void {
    const local = this.local.get(id);
    if (local?.batch) void this.insertBatch(id, local, local.batch);
  }

  /** Inserts a commit's item versions; those already there are skipped. */
  private apply(id: string, v: number, writes: ItemWrites): Promise<void> {
    return this.items.insert(docsOf(id, v, writes));
  }

  /**
   * Parts of intents a later commit replaced a grace period ago: their items are in the log, and a
   * reader that took their header before has had time to read them. Deleting at once would leave a
   * reader of a board that commits staged intents back to back retrying until it gives up.
   */
  private async dropReplacedParts(id: string): Promise<void> {
    const local = this.local.of(id);
    const now = this.clock();
    if (now - local.partsDroppedAt < PARTS_DROP_EVERY_MS) return;
    const due = now - PARTS_GRACE_MS;
    const replaced = local.replaced.filter((r) => r.at <= due);
    if (!replaced.length) return;
    local.partsDroppedAt = now;
    local.replaced = local.replaced.filter((r) => r.at > due);
    const below = Math.max(...replaced.map((r) => r.v));
    await this.parts.dropBelow(id, below);
  }

  /** Marks the versions commit `v` superseded, and deletes those superseded long enough ago. */
  private async collect(id: string, v: number, writes: ItemWrites): Promise<void> {
    const local = this.local.of(id);
    const now = this.clock();
    if (local.versions) {
      for (const workId of [...writes.put.map((i) => i.workId), ...writes.removed]) {
        const before = local.versions.get(workId);
        if (before !== undefined && before.v < v) local.garbage.push({ id: before.id, at: now });
        if (before === undefined || before.v < v) local.versions.set(workId, { v, id: itemVersionId(id, v, workId) });
      }
    }
    // Pushed as they are superseded, so the due ones lead: a commit looks at them alone, not at the
    // minute of versions behind them (a filter of the whole list was 2% of a busy node's CPU).
    let due = 0;
    while (due < local.garbage.length && local.garbage[due]!.at <= now - GC_GRACE_MS) due++;
    if (due < GC_BATCH) return;
    const ids = local.garbage.splice(0, due).map((g) => g.id);
    await this.items.drop(ids);
  }

  /** A board an earlier version kept whole in its header: its items go to the log at the header's version, then the header drops them. */
  private async migrate(id: string): Promise<void> {
    const old = (await this.run(() => this.driver.findOne({ _id: id } as Document))) as HeaderDoc | null;
    if (!old || old.layout === 2) return;
    await this.items.insert(docsOf(id, old.version, { put: Object.values(old.items ?? {}), removed: [] }));
    await this.run(() =>
      this.driver.updateOne({ _id: id, version: old.version, layout: { $exists: false } } as Document, {
        $set: { layout: 2, intent: null },
        $unset: { items: '' },
      }),
    );
  }
}
