// The limits on open feedback (DOMAIN.md "Feedback"): at most FEEDBACK_OPEN_PER_PRINCIPAL open
// entries per principal on a board, and FEEDBACK_OPEN_PER_BOARD on a board. A board's open entries
// are listed in one ledger document that changes only with the version check, so two posts racing
// for the last place, on one node or on two, cannot both take it: one commits, the other reads the
// ledger again and is refused. FerretDB has no multi-document transaction; one document needs none.
//
// A place is taken before its entry is written and given back after the entry's triage. A node that
// dies between two such steps leaves a place behind; the next post that meets a limit clears those
// (an entry no longer open, or a place whose entry was never written within RESERVATION_GRACE_MS).
import { AppError } from '../errors/app-error.js';
import { DuplicateKeyError, type FeedbackLedgerRecord, type Store } from '../../store/ports/store.js';

export const FEEDBACK_OPEN_PER_PRINCIPAL = 20;
export const FEEDBACK_OPEN_PER_BOARD = 500;
/** How long a place may wait for its entry to be written before it counts as left by a dead node. */
export const RESERVATION_GRACE_MS = 60_000;
/** Version-checked attempts before a change of the ledger gives up (503 FEEDBACK_BUSY). */
const ATTEMPTS = 40;

export type Place = FeedbackLedgerRecord['open'][number];
export type LedgerPorts = Pick<Store, 'feedback' | 'feedbackLedgers'>;

const pause = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 + attempt * 5)));

function refusal(open: readonly Place[], from: string): AppError | null {
  if (open.length >= FEEDBACK_OPEN_PER_BOARD) {
    return new AppError(
      'FEEDBACK_LIMIT',
      `This board holds ${FEEDBACK_OPEN_PER_BOARD} open feedback entries, as many as may be open at once; nothing was written. Post again once operators have triaged some.`,
      {
        scope: 'board',
        limit: FEEDBACK_OPEN_PER_BOARD,
        open: open.length,
      },
    );
  }
  const mine = open.filter((p) => p.from === from).length;
  if (mine >= FEEDBACK_OPEN_PER_PRINCIPAL) {
    return new AppError(
      'FEEDBACK_LIMIT',
      `You have ${FEEDBACK_OPEN_PER_PRINCIPAL} open feedback entries on this board, as many as one principal may; nothing was written. Post again once operators have triaged some.`,
      {
        scope: 'principal',
        limit: FEEDBACK_OPEN_PER_PRINCIPAL,
        open: mine,
      },
    );
  }
  return null;
}

export class FeedbackLedger {
  /** This node's posts per board, one after another: they would only race each other for the version. */
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(private readonly store: LedgerPorts) {}

  /** Takes a place on the board for `place`, or refuses with 429 FEEDBACK_LIMIT and writes nothing. */
  reserve(boardId: string, place: Place, now: number): Promise<void> {
    return this.inTurn(boardId, () => this.take(boardId, place, now));
  }

  /** Gives an entry's place back (after its triage, or when its entry could not be written). */
  async release(boardId: string, id: string): Promise<void> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const ledger = await this.store.feedbackLedgers.get(boardId);
      if (!ledger?.open.some((p) => p.id === id)) return;
      if (
        await this.store.feedbackLedgers.update(boardId, ledger.version, {
          open: ledger.open.filter((p) => p.id !== id),
        })
      )
        return;
      await pause(attempt);
    }
    // The place stays until a post that meets a limit clears it; the entry is closed all the same.
  }

  private async take(boardId: string, place: Place, now: number): Promise<void> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const ledger = await this.ledger(boardId);
      let open = ledger.open;
      if (refusal(open, place.from)) {
        open = await this.cleared(open, now);
        const refused = refusal(open, place.from);
        if (refused) {
          // Tidy what was cleared; another writer coming first does it no harm.
          if (open.length < ledger.open.length)
            await this.store.feedbackLedgers.update(boardId, ledger.version, { open });
          throw refused;
        }
      }
      if (await this.store.feedbackLedgers.update(boardId, ledger.version, { open: [...open, place] })) return;
      await pause(attempt);
    }
    throw new AppError(
      'FEEDBACK_BUSY',
      'The board’s feedback kept changing under this post; nothing was written.',
      undefined,
      { 'retry-after': '1' },
    );
  }

  private async ledger(boardId: string): Promise<FeedbackLedgerRecord> {
    const found = await this.store.feedbackLedgers.get(boardId);
    if (found) return found;
    const fresh: FeedbackLedgerRecord = { _id: boardId, version: 1, open: [] };
    try {
      await this.store.feedbackLedgers.insert(fresh);
      return fresh;
    } catch (e) {
      if (!(e instanceof DuplicateKeyError)) throw e;
      return (await this.store.feedbackLedgers.get(boardId))!;
    }
  }

  /** The places still held: entries open or being promoted, and fresh places whose entry is on its way. */
  private async cleared(open: readonly Place[], now: number): Promise<Place[]> {
    const entries = await this.store.feedback.select({ _id: { $in: open.map((p) => p.id) } }, ['status']);
    const status = new Map(entries.map((e) => [e._id, e.status]));
    return open.filter((p) => {
      const s = status.get(p.id);
      return s === undefined ? now - p.at < RESERVATION_GRACE_MS : s === 'open' || s === 'promoting';
    });
  }

  private inTurn<T>(boardId: string, work: () => Promise<T>): Promise<T> {
    const before = this.turns.get(boardId) ?? Promise.resolve();
    const mine = before.then(work, work);
    const settled = mine.catch(() => undefined);
    this.turns.set(boardId, settled);
    void settled.then(() => this.turns.get(boardId) === settled && this.turns.delete(boardId));
    return mine;
  }
}
