// The mail board sharing sends (invitations, resends, transfer offers) has one budget per board: at
// most MAILS_PER_HOUR in any hour, whoever they go to, and one a minute per address. Every mail is a
// record in a ledger; the budget is read and a slot recorded holding the board's lock (the account
// lock's document, keyed per board), in one step with whatever the mail is about (the invitation or
// offer written), so concurrent requests cannot pass the budget together, on any node.
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import { sha256 } from '../auth/authenticator.js';
import type { MailMessage, Mailer } from '../mail/mailer.js';
import type { SharingMailRecord, Store } from '../../store/ports/store.js';
import { withAccountLock } from './account-lock.js';

/** One address is mailed at most once a minute per board (an invitation, a resend or an offer)... */
export const MAIL_INTERVAL_MS = 60_000;
/** ...and a board sends at most this many sharing mails an hour, whoever they go to. */
export const MAILS_PER_HOUR = 50;
const HOUR_MS = 3600_000;

export interface SharingMailing<T> {
  projectId: string;
  kind: SharingMailRecord['kind'];
  /** The canonical address mailed. */
  to: string;
  now: number;
  /** Refusals that come before the budget (the lock is held). */
  check?: () => Promise<void>;
  /** What the mail is about, written once the slot is taken (the lock is held). */
  write: () => Promise<T>;
  message: (written: T) => MailMessage;
}

export class SharingMail {
  /** This node's mailings per board, one after another, so that one at a time waits on the store lock. */
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: Pick<Store, 'sharingMails' | 'accountLocks'>,
    private readonly mailer: Mailer,
  ) {}

  /**
   * Checks, takes a slot of the board's budget for the address, writes, then mails. A spent budget
   * is 429 INVITATION_LIMIT with Retry-After and changes nothing; a write or a mail that fails
   * gives its slot back, so only mails sent are counted.
   */
  async send<T>(m: SharingMailing<T>): Promise<T> {
    const slot: SharingMailRecord = {
      _id: randomUUID(),
      version: 1,
      projectId: m.projectId,
      to: sha256(m.to),
      kind: m.kind,
      at: m.now,
    };
    const written = await this.inTurn(m.projectId, () =>
      this.locked(m.projectId, async () => {
        await m.check?.();
        await this.take(slot);
        try {
          return await m.write();
        } catch (e) {
          await this.giveBack(slot);
          throw e;
        }
      }),
    );
    try {
      await this.mailer.send(m.message(written));
    } catch (e) {
      await this.giveBack(slot);
      throw e;
    }
    return written;
  }

  private async take(slot: SharingMailRecord): Promise<void> {
    const { projectId, at: now } = slot;
    await this.store.sharingMails.deleteMany({ projectId, at: { $lte: now - HOUR_MS } });
    const sent = await this.store.sharingMails.find(
      { projectId, at: { $gt: now - HOUR_MS } },
      {
        sort: [
          ['at', 1],
          ['_id', 1],
        ],
      },
    );
    if (sent.length >= MAILS_PER_HOUR) {
      const wait = seconds(sent[sent.length - MAILS_PER_HOUR]!.at + HOUR_MS - now);
      throw new AppError(
        'INVITATION_LIMIT',
        `A board sends at most ${MAILS_PER_HOUR} sharing mails (invitations, resends, transfer offers) an hour; retry in ${wait} s.`,
        { limit: MAILS_PER_HOUR, retryAfterSeconds: wait },
        { 'retry-after': String(wait) },
      );
    }
    const last = sent.filter((s) => s.to === slot.to && s.at > now - MAIL_INTERVAL_MS).at(-1);
    if (last) {
      const wait = seconds(last.at + MAIL_INTERVAL_MS - now);
      throw new AppError(
        'INVITATION_LIMIT',
        `This address was mailed about this board less than a minute ago; retry in ${wait} s.`,
        { retryAfterSeconds: wait },
        { 'retry-after': String(wait) },
      );
    }
    await this.store.sharingMails.insert(slot);
  }

  private async giveBack(slot: SharingMailRecord): Promise<void> {
    await this.store.sharingMails.delete(slot._id).catch(() => undefined);
  }

  /** Holding the board's budget lock, shared by every node; waited for too long: 503 SHARING_BUSY. */
  private async locked<T>(projectId: string, work: () => Promise<T>): Promise<T> {
    let started = false;
    try {
      return await withAccountLock(this.store, `sharing-mail:${projectId}`, () => ((started = true), work()));
    } catch (e) {
      if (!started && e instanceof AppError && e.code === 'ACCOUNT_BUSY')
        throw new AppError('SHARING_BUSY', undefined, undefined, { 'retry-after': '1' });
      throw e;
    }
  }

  private inTurn<T>(projectId: string, work: () => Promise<T>): Promise<T> {
    const before = this.turns.get(projectId) ?? Promise.resolve();
    const mine = before.then(work, work);
    const settled = mine.catch(() => undefined);
    this.turns.set(projectId, settled);
    void settled.then(() => this.turns.get(projectId) === settled && this.turns.delete(projectId));
    return mine;
  }
}

const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));
