// The operators' feedback desk (DOMAIN.md "Operators", "Feedback"): every board's feedback, newest
// first; resolve, dismiss, and promote, which makes one item on the entry's board, labelled
// `feedback` and `feedback:<id>` so it can be traced back. Each action writes one audit row, and a
// closed entry gives its place back to the board's limits.
//
// Promote makes its item once, even when operators promote the same entry at the same moment: the
// right to make it is a claim taken on the entry with the version check (open → promoting), so only
// one request proceeds; the others wait for it and answer with its item. A promotion that died
// between its claim and its end leaves the claim; after PROMOTION_STALE_MS another promote takes
// it over and first looks on the board for an item the dead one made (by its label), so the item
// is made once. A taken-over promotion that was only slow and made an item anyway cancels its own.
import { randomUUID } from 'node:crypto';
import { keyKind } from '../../machines/board-entries.js';
import type { NewItem } from '../../machines/board-commands.js';
import type { BoardItem } from '../../machines/board.js';
import type { BoardAccess, BoardCall } from '../board/board-access.js';
import { AppError } from '../errors/app-error.js';
import { feedbackView, type FeedbackBook, type FeedbackQuery } from '../feedback/feedback.js';
import type { FeedbackRecord, Store } from '../../store/ports/store.js';
import { auditOperatorAction, type OperatorCtx } from './audit.js';

type Ctx = OperatorCtx;

/** After this, a promotion's claim belongs to a promotion that died, and may be taken over. */
export const PROMOTION_STALE_MS = 120_000;
/** How long a promote waits for another operator's promotion of the same entry to end. */
export const PROMOTION_WAIT_MS = 5_000;
const POLL_MS = 50;
const TITLE_MAX = 200;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The label that ties an item to the feedback it was promoted from. */
export const feedbackLabel = (id: string): string => `feedback:${id}`;

/** The item a promotion makes: its title from the text's first line, the whole text and where it came from in the description. */
export function itemFromFeedback(entry: FeedbackRecord): NewItem {
  const line = entry.text.split('\n')[0]!.trim();
  const title = line.length > TITLE_MAX ? `${line.slice(0, TITLE_MAX - 1).trimEnd()}…` : line;
  const about = entry.workId ? `, about ${entry.workId}` : '';
  return {
    title,
    description: `${entry.text}\n\nPromoted from feedback ${entry._id} (${entry.kind}, from ${entry.from}${about}).`,
    type: entry.kind === 'problem' ? 'bug' : 'task',
    priority: 2,
    parentId: null,
    dependsOn: [],
    verify: 'none',
    maxAttempts: 3,
    criteria: [],
    doctrine: [],
    spec: [],
    labels: ['feedback', feedbackLabel(entry._id)],
  };
}

export interface Promoted {
  feedback: ReturnType<typeof feedbackView>;
  workId: string;
  /** False when the entry had been promoted already (by this operator or another): its item is named, none made. */
  created: boolean;
}

export class FeedbackDesk {
  constructor(
    private readonly store: Pick<Store, 'feedback' | 'feedbackLedgers' | 'audit' | 'boards' | 'projects'>,
    private readonly book: FeedbackBook,
    private readonly boards: Pick<BoardAccess, 'ask'>,
    /** The server's clock: a claim's age is read again while waiting. */
    private readonly clock: () => number,
  ) {}

  /** A page of entries across boards, each with its board's name (null for a board gone meanwhile), read in one call. */
  async list(query: FeedbackQuery) {
    const page = await this.book.page(query);
    const ids = [...new Set(page.entries.map((e) => e.boardId))];
    const projects = ids.length ? await this.store.projects.select({ _id: { $in: ids } }, ['name']) : [];
    const names = new Map(projects.map((p) => [p._id, p.name]));
    return {
      feedback: page.entries.map((e) => ({ ...feedbackView(e), boardName: names.get(e.boardId) ?? null })),
      nextCursor: page.nextCursor,
    };
  }

  /** Resolves or dismisses an open entry; one already triaged, or being promoted, is 409 FEEDBACK_CLOSED. */
  async close(ctx: Ctx, id: string, to: 'resolved' | 'dismissed', reason: string | null) {
    for (;;) {
      const entry = await this.book.get(id);
      if (entry.status !== 'open') throw closed(entry);
      const done = await this.store.feedback.update(id, entry.version, {
        status: to,
        closedBy: ctx.identity!.principal,
        closedAt: ctx.now,
        reason,
      });
      if (!done) continue;
      await this.book.ledger.release(entry.boardId, id);
      await auditOperatorAction(this.store, ctx, {
        action: to === 'resolved' ? 'feedback.resolve' : 'feedback.dismiss',
        target: `feedback:${id}`,
        projectId: entry.boardId,
        reason,
        data: { kind: entry.kind, from: entry.from },
      });
      return { feedback: feedbackView(done) };
    }
  }

  /** Makes the entry's item, once; a promoted entry answers with its item. */
  async promote(ctx: Ctx, id: string, reason: string): Promise<Promoted> {
    const waitUntil = Date.now() + PROMOTION_WAIT_MS;
    for (;;) {
      const entry = await this.book.get(id);
      if (entry.status === 'promoted') return this.answer(ctx, entry, reason, false, false);
      if (entry.status !== 'open' && entry.status !== 'promoting') throw closed(entry);
      const now = this.clock();
      const takeover = entry.status === 'promoting' && now - entry.promotion!.at >= PROMOTION_STALE_MS;
      if (entry.status === 'open' || takeover) {
        const promotion = { token: randomUUID(), by: ctx.identity!.principal, at: now };
        const claimed = await this.store.feedback.update(id, entry.version, { status: 'promoting', promotion });
        if (claimed) return this.make(ctx, claimed, reason, takeover);
        continue;
      }
      if (Date.now() >= waitUntil) {
        throw new AppError(
          'FEEDBACK_BUSY',
          `Another promotion of this entry (by ${entry.promotion!.by}) has not finished yet; retry shortly.`,
          { id, promotingBy: entry.promotion!.by },
          { 'retry-after': '1' },
        );
      }
      await pause(POLL_MS);
    }
  }

  /** Holding the claim: finds the item a dead promotion made, or makes it; then closes the entry. */
  private async make(ctx: Ctx, entry: FeedbackRecord, reason: string, takeover: boolean): Promise<Promoted> {
    const operator = ctx.identity!.principal;
    const found = takeover ? await this.itemOnBoard(entry) : null;
    let workId = found;
    if (workId === null) {
      if (!(await this.store.projects.get(entry.boardId))) {
        await this.store.feedback.update(entry._id, entry.version, { status: 'open', promotion: null });
        throw new AppError('NOT_FOUND', 'The board of this feedback no longer exists; resolve or dismiss it instead.', {
          projectId: entry.boardId,
        });
      }
      try {
        // `once`: a promotion too slow for its claim and the one that took it over make one item.
        const [item] = await this.boards.ask(onBoard(entry.boardId, operator), {
          kind: 'create',
          items: [itemFromFeedback(entry)],
          actor: operator,
          once: feedbackLabel(entry._id),
        });
        workId = item!.workId;
      } catch (e) {
        // A refusal made nothing, so the entry is open again; any other failure may have made the
        // item, so the claim stays for a later promote to take over and look for it.
        if (e instanceof AppError && e.status < 500)
          await this.store.feedback.update(entry._id, entry.version, { status: 'open', promotion: null });
        throw e;
      }
    }
    const done = await this.store.feedback.update(entry._id, entry.version, {
      status: 'promoted',
      promotedWorkId: workId,
      closedBy: operator,
      closedAt: ctx.now,
      reason,
    });
    if (!done) return this.settle(ctx, entry, reason, workId);
    await this.book.ledger.release(entry.boardId, entry._id);
    return this.answer(ctx, done, reason, found === null, takeover);
  }

  /**
   * This promotion was so slow that another took its claim over. Once that one ends, the entry
   * names one item; if it is not the one made here, the one made here is cancelled.
   */
  private async settle(ctx: Ctx, mine: FeedbackRecord, reason: string, workId: string): Promise<Promoted> {
    const waitUntil = Date.now() + PROMOTION_STALE_MS;
    for (;;) {
      const entry = await this.book.get(mine._id);
      if (entry.status === 'promoted') {
        if (entry.promotedWorkId !== workId) {
          const cancel = {
            type: 'CANCEL',
            reason: `a second item for feedback ${entry._id}, promoted to ${entry.promotedWorkId}`,
          } as const;
          await this.boards.ask(onBoard(entry.boardId, ctx.identity!.principal), {
            kind: 'event',
            workId,
            actor: ctx.identity!.principal,
            event: cancel,
          });
        }
        return this.answer(ctx, entry, reason, false, true);
      }
      if (entry.status !== 'promoting' || Date.now() >= waitUntil)
        throw new AppError(
          'FEEDBACK_BUSY',
          'Another promotion took this one over and has not finished yet.',
          { id: entry._id },
          { 'retry-after': '1' },
        );
      await pause(POLL_MS * 4);
    }
  }

  private async answer(
    ctx: Ctx,
    entry: FeedbackRecord,
    reason: string,
    created: boolean,
    takeover: boolean,
  ): Promise<Promoted> {
    await auditOperatorAction(this.store, ctx, {
      action: 'feedback.promote',
      target: `feedback:${entry._id}`,
      projectId: entry.boardId,
      reason,
      data: { workId: entry.promotedWorkId, created, takeover, kind: entry.kind, from: entry.from },
    });
    return { feedback: feedbackView(entry), workId: entry.promotedWorkId!, created };
  }

  /** The item a promotion of this entry made, by its label (only a promotion taken over looks). */
  private async itemOnBoard(entry: FeedbackRecord): Promise<string | null> {
    const board = await this.store.boards.load(entry.boardId);
    const label = feedbackLabel(entry._id);
    // Items only: doctrine entries and spec clauses are stored beside them (machines/board-entries.ts).
    const made = ((board?.items ?? []) as BoardItem[]).filter(
      (i) => keyKind(i.workId).kind === 'item' && i.labels.includes(label),
    );
    // A live item before a cancelled one (a second item a slow promotion cancelled), then the first made.
    const rank = (i: BoardItem) => (i.state === 'cancelled' ? 1e12 : 0) + Number(i.workId.slice(2));
    return made.sort((a, b) => rank(a) - rank(b))[0]?.workId ?? null;
  }
}

function closed(entry: FeedbackRecord): AppError {
  const what = entry.status === 'promoting' ? 'is being promoted' : `was ${entry.status} already`;
  return new AppError(
    'FEEDBACK_CLOSED',
    `This feedback entry ${what}; it can no longer be resolved, dismissed or promoted.`,
    { id: entry._id, status: entry.status, promotedWorkId: entry.promotedWorkId },
  );
}

/**
 * Operator routes select no board: the command goes to the entry's board by its id. BoardAccess.ask
 * reads only the board id of a call (role and scope were the gate's to check).
 */
const onBoard = (boardId: string, principal: string): BoardCall => ({
  boardId,
  principal,
  role: 'owner',
  within: null,
  actor: undefined as never,
});
