// The item log's documents: one per item and board version that wrote it, under an `_id` that
// sorts by board, then version (itemVersionId), so a board's versions are read as one `_id` range.
import type { Collection as Driver, Document } from 'mongodb';
import { itemVersionId, type ItemWrites, type StoredItem } from '../ports/store.js';
import { duplicateWrites } from './duplicate-key.js';
import { firstBatchOnly } from './mongo-collection.js';

/** Versions a single insert or delete carries at most: a board rewound a few times in a minute supersedes enough for one to pass 16 MB. */
const CHUNK = 1000;

export interface ItemDoc {
  _id: string;
  boardId: string;
  workId: string;
  v: number;
  item: StoredItem | null;
}

export const docsOf = (boardId: string, v: number, writes: ItemWrites): ItemDoc[] => [
  ...writes.put.map((item) => ({ _id: itemVersionId(boardId, v, item.workId), boardId, workId: item.workId, v, item })),
  ...writes.removed.map((workId) => ({ _id: itemVersionId(boardId, v, workId), boardId, workId, v, item: null })),
];

/**
 * A board's item versions above `after` up to `upTo`, as one `_id` range (`itemVersionId` sorts by
 * board, then version), so the log needs no index but its `_id`'s: a secondary index on DocumentDB
 * is a RUM index whose every insert is logged page by page, the costliest write of a commit. The
 * fields are checked too: the range may hold another board's versions (one whose id extends this
 * one's past a ':'), and, with `after` below 0, versions an earlier version of this adapter wrote
 * under `<board>:<work id>:<v>` (see load).
 */
export function logRange(boardId: string, after: number, upTo: number): Document {
  const _id =
    after < 0
      ? { $gt: `${boardId}:`, $lt: `${boardId};` } // every id that starts with the board's, of either shape
      : { $gte: itemVersionId(boardId, after + 1, ''), $lt: itemVersionId(boardId, upTo + 1, '') };
  return { _id, boardId, v: { $gt: after, $lte: upTo } };
}

/** The item log collection: its reads by range, its inserts (idempotent) and deletes. */
export class ItemLog {
  constructor(
    private readonly log: Driver<Document>,
    /** The collection's own way of running a driver call (its errors mapped, the call counted until answered). */
    private readonly run: <R>(op: () => Promise<R>) => Promise<R>,
    /** Counts a call until it is answered, its errors as they are. */
    private readonly track: <R>(call: Promise<R>) => Promise<R>,
  ) {}

  /** A board's versions above `after` up to `upTo` (see logRange). */
  async read(boardId: string, after: number, upTo: number): Promise<ItemDoc[]> {
    return (await this.run(() => firstBatchOnly(this.log, logRange(boardId, after, upTo)))) as unknown as ItemDoc[];
  }

  /** Inserts item versions, CHUNK an insert; those already there are skipped. */
  async insert(docs: ItemDoc[]): Promise<void> {
    for (let i = 0; i < docs.length; i += CHUNK) {
      try {
        await this.track(this.log.insertMany(docs.slice(i, i + CHUNK) as unknown as Document[], { ordered: false }));
      } catch (e) {
        if (!duplicateWrites(e)) await this.run(() => Promise.reject(e));
      }
    }
  }

  /** Deletes versions by id, CHUNK a delete. */
  async drop(ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      await this.run(() => this.log.deleteMany({ _id: { $in: chunk } } as Document));
    }
  }

  /** Every version of a board (the board is deleted). */
  async dropBoard(boardId: string): Promise<void> {
    await this.run(() => this.log.deleteMany(logRange(boardId, -1, Number.MAX_SAFE_INTEGER)));
  }
}
