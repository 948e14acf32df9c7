// Boards on MongoDB, without multi-document transactions: a header document per board (version,
// counters, aggregates, outbox) and an insert-only log of item versions beside it, one document
// per item and board version that wrote it ({boardId, v} indexed).
//
// A commit is one version-checked update of the header that carries the commit's intent: the
// changed items inline, or, past INLINE_ITEMS (a batch, a rewind of a large board), a reference to parts
// staged before it. That update is the commit point. The intent's item versions are inserted next
// (idempotent: a version's id is fixed, and inserting it twice changes nothing), and a header
// moves on only once the intent before it is in the log. So a reader that takes the header at
// version H, then the log, sees every version below H; it overlays H's intent, which may still be
// on its way; a version above H means a commit landed meanwhile, and it reads again.
// Superseded versions are deleted a grace period after they were superseded, by the node that
// holds the board.
import { randomUUID } from 'node:crypto';
import { MongoBulkWriteError, type Collection as Driver, type Document } from 'mongodb';
import { ContentionError, SCHEMA, type BoardChanges, type BoardCollection, type BoardRecord, type Changes, type ItemWrites, type LoadedBoard, type StoredItem } from '../ports/store.js';
import { MongoCollection, type CommitGuards } from './mongo-collection.js';

/**
 * Changed items a header carries itself; more are staged in parts of PART_ITEMS. A wire server may
 * decode the whole header on every read of it (FerretDB 1.x decodes about 1 MB/s), so it stays small.
 */
export const INLINE_ITEMS = 64;
const PART_ITEMS = 500;
const INSERT_CHUNK = 1000;
/** A superseded item version is deleted this long after it was superseded, so a reader that is mid-way still finds it. */
export const GC_GRACE_MS = 60_000;
const GC_BATCH = 500;
const READ_ATTEMPTS = 8;

interface ItemDoc {
  _id: string;
  boardId: string;
  workId: string;
  v: number;
  item: StoredItem | null;
}

type Intent = { v: number; put: StoredItem[]; removed: string[] } | { v: number; stage: string; parts: number; done?: boolean };

interface HeaderDoc extends BoardRecord {
  /** 2 for this layout; absent on a board whose items an earlier version kept inside the header. */
  layout?: 2;
  intent?: Intent | null;
  items?: Record<string, StoredItem>;
}

/** What this process knows of one board's item log. */
interface Local {
  /** The version whose intent is known to be in the log here. */
  applied: number;
  /** The last commit's log inserts, which the next commit awaits. */
  pending: Promise<void>;
  /** The version each work id holds in the log, once a whole load told us (for deleting superseded ones). */
  versions: Map<string, number> | null;
  garbage: { id: string; at: number }[];
}

const versionId = (boardId: string, workId: string, v: number): string => `${boardId}:${workId}:${v}`;
const docsOf = (boardId: string, v: number, writes: ItemWrites): ItemDoc[] => [
  ...writes.put.map((item) => ({ _id: versionId(boardId, item.workId, v), boardId, workId: item.workId, v, item })),
  ...writes.removed.map((workId) => ({ _id: versionId(boardId, workId, v), boardId, workId, v, item: null })),
];
const liveCount = (header: BoardRecord): number | null => (header.counts ? Object.values(header.counts).reduce((a, b) => a + b, 0) : null);

function strip(header: HeaderDoc): BoardRecord {
  const { layout: _layout, intent: _intent, items: _items, ...record } = header;
  return record;
}

export class MongoBoards extends MongoCollection<BoardRecord> implements BoardCollection {
  private readonly local = new Map<string, Local>();

  constructor(
    headers: Driver<Document>,
    private readonly log: Driver<Document>,
    private readonly staging: Driver<Document>,
    guards: CommitGuards | null,
    private readonly clock: () => number = Date.now,
  ) {
    super('boards', SCHEMA.boards, headers, guards, ['layout', 'intent', 'items']);
  }

  override insert(doc: BoardRecord): Promise<void> {
    return super.insert({ ...doc, layout: 2, intent: null } as BoardRecord);
  }

  override async delete(id: string, expectedVersion?: number): Promise<boolean> {
    const gone = await super.delete(id, expectedVersion);
    if (gone) {
      // The header went first: the board is gone for every reader; its log and parts follow.
      this.local.delete(id);
      await this.run(() => this.log.deleteMany({ boardId: id }));
      await this.run(() => this.staging.deleteMany({ boardId: id }));
    }
    return gone;
  }

  override async deleteMany(filter: Parameters<MongoCollection<BoardRecord>['deleteMany']>[0]): Promise<number> {
    let deleted = 0;
    for (const { _id } of await this.select(filter, ['version'])) if (await this.delete(_id)) deleted++;
    return deleted;
  }

  async load(id: string): Promise<LoadedBoard | null> {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const header = await this.header(id);
      if (!header) return null;
      const docs = (await this.run(() => this.log.find({ boardId: id }).toArray())) as unknown as ItemDoc[];
      const latest = await this.settle(header, docs, 0);
      if (!latest) continue;
      const items = [...latest.values()].flatMap((d) => (d.item ? [d.item] : []));
      const expected = liveCount(header);
      if (expected !== null && items.length !== expected) continue; // a version superseded meanwhile: read again
      await this.adopt(id, header);
      const local = this.localOf(id);
      local.versions = new Map([...latest.values()].map((d) => [d.workId, d.v]));
      const now = this.clock();
      for (const doc of docs) if (doc.v < (latest.get(doc.workId)?.v ?? 0)) local.garbage.push({ id: doc._id, at: now });
      return { record: strip(header), items };
    }
    throw new ContentionError('boards', id);
  }

  async changesSince(id: string, version: number): Promise<BoardChanges | null> {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const header = await this.header(id);
      if (!header) return null;
      if (header.version === version) return { record: strip(header), items: [], removed: [] };
      const docs = (await this.run(() => this.log.find({ boardId: id, v: { $gt: version } }).toArray())) as unknown as ItemDoc[];
      const latest = await this.settle(header, docs, version);
      if (!latest) continue;
      await this.adopt(id, header);
      const versions = this.localOf(id).versions;
      for (const d of latest.values()) versions?.set(d.workId, d.v);
      const changed = [...latest.values()];
      return { record: strip(header), items: changed.flatMap((d) => (d.item ? [d.item] : [])), removed: changed.filter((d) => !d.item).map((d) => d.workId) };
    }
    throw new ContentionError('boards', id);
  }

  async commit(id: string, expectedVersion: number, set: Changes<BoardRecord>, writes: ItemWrites): Promise<boolean> {
    const local = this.localOf(id);
    await local.pending;
    if (local.applied !== expectedVersion) await this.finish(id, expectedVersion);
    const v = expectedVersion + 1;
    let intent: Intent = { v, put: [...writes.put], removed: [...writes.removed] };
    let stage: string | null = null;
    if (writes.put.length + writes.removed.length > INLINE_ITEMS) {
      stage = randomUUID();
      intent = { v, stage, parts: await this.stageParts(id, stage, writes) };
    }
    const landed = await this.guarded(id, expectedVersion, false, async () => {
      const result = await this.run(() => this.driver.updateOne({ _id: id, version: expectedVersion } as Document, { $set: { ...set, intent }, $inc: { version: 1 } }));
      return result.modifiedCount === 1;
    });
    if (!landed) {
      if (stage) await this.staging.deleteMany({ stage }).catch(() => undefined);
      return false;
    }
    // Committed. The log inserts follow off the caller's path; the next commit waits for them, and
    // if they fail, whoever reads or commits next finishes them from the header.
    local.pending = this.apply(id, intent, writes).then(
      () => this.collect(id, writes),
      () => void (local.applied = -1),
    );
    return true;
  }

  /** Waits for this process's log inserts of every board (tests, and a clean close). */
  async settled(): Promise<void> {
    await Promise.all([...this.local.values()].map((l) => l.pending));
  }

  private localOf(id: string): Local {
    let local = this.local.get(id);
    if (!local) this.local.set(id, (local = { applied: -1, pending: Promise.resolve(), versions: null, garbage: [] }));
    return local;
  }

  /** The header, with a board of the earlier layout moved to this one first. */
  private async header(id: string): Promise<HeaderDoc | null> {
    const header = (await this.run(() => this.driver.findOne({ _id: id } as Document, { projection: { items: 0 } }))) as HeaderDoc | null;
    if (!header || header.layout === 2) return header;
    await this.migrate(id);
    return this.header(id);
  }

  /**
   * The latest version of each work id among `docs` as of the header's version, with the header's
   * own intent laid over them; null when a later commit landed meanwhile (read again).
   */
  private async settle(header: HeaderDoc, docs: ItemDoc[], since: number): Promise<Map<string, ItemDoc> | null> {
    const latest = new Map<string, ItemDoc>();
    for (const doc of docs) {
      if (doc.v > header.version) return null;
      if ((latest.get(doc.workId)?.v ?? -1) < doc.v) latest.set(doc.workId, doc);
    }
    const intent = header.intent;
    if (intent && intent.v === header.version && intent.v > since && !('done' in intent && intent.done)) {
      const writes = await this.writesOf(header._id, intent);
      if (!writes) return null;
      for (const doc of docsOf(header._id, intent.v, writes)) latest.set(doc.workId, doc);
    }
    return latest;
  }

  /** An intent's writes: inline, or read from its parts (null when they are gone: it was applied meanwhile). */
  private async writesOf(boardId: string, intent: Intent): Promise<ItemWrites | null> {
    if (!('stage' in intent)) return intent;
    const parts = (await this.run(() => this.staging.find({ stage: intent.stage }).toArray())) as unknown as (ItemWrites & { boardId: string })[];
    if (parts.length !== intent.parts || parts.some((p) => p.boardId !== boardId)) return null;
    return { put: parts.flatMap((p) => p.put), removed: parts.flatMap((p) => p.removed) };
  }

  /** A header read here: its intent goes into the log (if not known to be there) before this process commits over it. */
  private async adopt(id: string, header: HeaderDoc): Promise<void> {
    const local = this.localOf(id);
    if (local.applied === header.version) return;
    const intent = header.intent;
    if (intent && intent.v === header.version && !('done' in intent && intent.done)) {
      const writes = await this.writesOf(id, intent);
      if (writes) await this.apply(id, intent, writes);
    }
    local.applied = header.version;
  }

  /** Before committing over `version`: its intent is in the log, whoever committed it. */
  private async finish(id: string, version: number): Promise<void> {
    const header = await this.header(id);
    if (header?.version === version) await this.adopt(id, header);
  }

  /** Inserts an intent's item versions (those already there are skipped), then retires its parts. */
  private async apply(id: string, intent: Intent, writes: ItemWrites): Promise<void> {
    const docs = docsOf(id, intent.v, writes);
    for (let i = 0; i < docs.length; i += INSERT_CHUNK) await this.insertVersions(docs.slice(i, i + INSERT_CHUNK));
    if ('stage' in intent) {
      const marked = await this.guarded(id, intent.v, false, async () => {
        const result = await this.run(() => this.driver.updateOne({ _id: id, version: intent.v, 'intent.stage': intent.stage } as Document, { $set: { 'intent.done': true } }));
        return result.modifiedCount === 1;
      });
      if (marked) await this.run(() => this.staging.deleteMany({ stage: intent.stage }));
    }
    this.localOf(id).applied = intent.v;
  }

  private async insertVersions(docs: ItemDoc[]): Promise<void> {
    try {
      await this.log.insertMany(docs as unknown as Document[], { ordered: false });
    } catch (e) {
      const errors = e instanceof MongoBulkWriteError ? [e.writeErrors].flat() : null;
      if (!errors?.length || !errors.every((w) => w.code === 11000 || /duplicate key|UNIQUE constraint failed/i.test(w.errmsg ?? ''))) await this.run(() => Promise.reject(e));
    }
  }

  private async stageParts(id: string, stage: string, writes: ItemWrites): Promise<number> {
    const parts: Document[] = [];
    for (let i = 0; i < writes.put.length; i += PART_ITEMS) parts.push({ put: writes.put.slice(i, i + PART_ITEMS), removed: [] });
    for (let i = 0; i < writes.removed.length; i += PART_ITEMS * 10) parts.push({ put: [], removed: writes.removed.slice(i, i + PART_ITEMS * 10) });
    const docs = parts.map((part, n) => ({ _id: `${stage}:${n}`, boardId: id, stage, at: this.clock(), ...part }));
    for (const doc of docs) await this.run(() => this.staging.insertOne(doc as Document));
    return docs.length;
  }

  /** Marks the versions this commit superseded, and deletes those superseded long enough ago. */
  private async collect(id: string, writes: ItemWrites): Promise<void> {
    const local = this.localOf(id);
    const now = this.clock();
    if (local.versions) {
      for (const workId of [...writes.put.map((i) => i.workId), ...writes.removed]) {
        const before = local.versions.get(workId);
        if (before !== undefined && before < local.applied) local.garbage.push({ id: versionId(id, workId, before), at: now });
        local.versions.set(workId, local.applied);
      }
    }
    const due = local.garbage.filter((g) => g.at <= now - GC_GRACE_MS);
    if (due.length < GC_BATCH) return;
    local.garbage = local.garbage.filter((g) => g.at > now - GC_GRACE_MS);
    await this.run(() => this.log.deleteMany({ _id: { $in: due.map((g) => g.id) } } as Document));
  }

  /** A board an earlier version kept whole in its header: its items go to the log at the header's version, then the header drops them. */
  private async migrate(id: string): Promise<void> {
    const old = (await this.run(() => this.driver.findOne({ _id: id } as Document))) as HeaderDoc | null;
    if (!old || old.layout === 2) return;
    const docs = Object.values(old.items ?? {}).map((item) => ({ _id: versionId(id, item.workId, old.version), boardId: id, workId: item.workId, v: old.version, item }));
    for (let i = 0; i < docs.length; i += INSERT_CHUNK) await this.insertVersions(docs.slice(i, i + INSERT_CHUNK));
    await this.guarded(id, old.version, false, async () => {
      await this.run(() => this.driver.updateOne({ _id: id, version: old.version, layout: { $exists: false } } as Document, { $set: { layout: 2, intent: null }, $unset: { items: '' } }));
      return true;
    });
  }
}
