// Feedback entries (DOMAIN.md "Feedback"): agents post them about their working conditions on a
// board, within the limits the ledger keeps (ledger.ts); the board's owner and admins, and the
// operators across boards, read them a page at a time, newest first; triage closes them.
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import type { FeedbackRecord, FeedbackStatus, Filter, Store } from '../../store/ports/store.js';
import { FeedbackLedger } from './ledger.js';

export const FEEDBACK_KINDS = ['problem', 'suggestion', 'question'] as const;
export const FEEDBACK_STATUSES = [
  'open',
  'promoting',
  'resolved',
  'dismissed',
  'promoted',
] as const satisfies readonly FeedbackStatus[];

/** `fb_`, the posting time (base36, 10 digits), 10 random hex: ids sort in posting order on every board. */
export const FEEDBACK_ID = /^fb_[0-9a-z]{10}[0-9a-f]{10}$/;
const feedbackId = (now: number): string => `fb_${now.toString(36).padStart(10, '0')}${randomBytes(5).toString('hex')}`;

export type FeedbackPorts = Pick<Store, 'feedback' | 'feedbackLedgers'>;
export type NewFeedback = Pick<FeedbackRecord, 'boardId' | 'from' | 'kind' | 'text' | 'workId'>;

export interface FeedbackQuery {
  boardId?: string | undefined;
  status?: FeedbackStatus | undefined;
  /** The id the previous page ended at. */
  cursor?: string | undefined;
  limit: number;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** An entry as readers get it. */
export const feedbackView = (r: FeedbackRecord) => ({
  id: r._id,
  projectId: r.boardId,
  from: r.from,
  kind: r.kind,
  text: r.text,
  workId: r.workId,
  status: r.status,
  at: iso(r.at)!,
  closedBy: r.closedBy,
  closedAt: iso(r.closedAt),
  reason: r.reason,
  promotedWorkId: r.promotedWorkId,
});
export type FeedbackView = ReturnType<typeof feedbackView>;

export class FeedbackBook {
  readonly ledger: FeedbackLedger;

  constructor(private readonly store: FeedbackPorts) {
    this.ledger = new FeedbackLedger(store);
  }

  /** Stores an entry once the ledger gave it a place (429 FEEDBACK_LIMIT otherwise, and nothing written). */
  async post(entry: NewFeedback, now: number): Promise<FeedbackRecord> {
    const record: FeedbackRecord = {
      _id: feedbackId(now),
      version: 1,
      ...entry,
      status: 'open',
      at: now,
      closedBy: null,
      closedAt: null,
      reason: null,
      promotion: null,
      promotedWorkId: null,
    };
    await this.ledger.reserve(entry.boardId, { id: record._id, from: entry.from, at: now }, now);
    try {
      await this.store.feedback.insert(record);
    } catch (e) {
      await this.ledger.release(entry.boardId, record._id).catch(() => undefined);
      throw e;
    }
    return record;
  }

  /** One entry, or 404 FEEDBACK_NOT_FOUND. */
  async get(id: string): Promise<FeedbackRecord> {
    const found = FEEDBACK_ID.test(id) ? await this.store.feedback.get(id) : null;
    if (!found) throw new AppError('FEEDBACK_NOT_FOUND', 'No feedback entry has that id.', { id });
    return found;
  }

  /** A page of entries, newest first, of one board or of all, in one status or any. */
  async page(query: FeedbackQuery): Promise<{ entries: FeedbackRecord[]; nextCursor: string | null }> {
    if (query.cursor !== undefined && !FEEDBACK_ID.test(query.cursor))
      throw new AppError('INVALID_CURSOR', 'Pass nextCursor exactly as the previous page gave it, or omit it.');
    const filter: Filter<FeedbackRecord> = {
      ...(query.boardId !== undefined && { boardId: query.boardId }),
      ...(query.status !== undefined && { status: query.status }),
      ...(query.cursor !== undefined && { _id: { $lt: query.cursor } }),
    };
    const found = await this.store.feedback.find(filter, { sort: [['_id', -1]], limit: query.limit + 1 });
    const entries = found.slice(0, query.limit);
    return { entries, nextCursor: found.length > query.limit ? entries.at(-1)!._id : null };
  }
}
