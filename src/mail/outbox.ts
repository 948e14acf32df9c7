// Mail that cannot be sent right now is not lost, not even with the node that accepted it.
// Each message is written to the store's outbox (sealed: src/mail/sealed.ts) before the operation
// that asked for it answers, attempted at once, and removed only when the SMTP server accepts it
// or refuses it for good. A failure that may pass (a connection refused, a timeout, a 4xx reply)
// is tried again with exponential backoff and jitter, up to MAX_ATTEMPTS (about an hour); a
// permanent refusal (a 5xx reply) or the last failed attempt is logged at error level with its
// code, never silently dropped.
//
// Who sends a message: the node that holds it, until `heldUntil` (its next attempt's time plus
// the takeover delay). A node that stops cleanly hands its mail back at once; one that dies (kill
// -9, a lost host) keeps it until then, after which any node's sweep takes it over with a
// compare-and-set on the record's version, so exactly one node sends it next. Delivery is at
// least once: a node that dies between the server's acceptance and the record's removal leaves a
// message that is sent again.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Collection, MailOutboxRecord } from '../../store/ports/store.js';
import { AppError } from '../errors/app-error.js';
import type { MailMessage, Mailer, MailStats } from './mailer.js';
import { openMail, sealMail } from './sealed.js';

/** Delivers one message now, or throws (nodemailer's errors carry `code` and `responseCode`). */
export type Deliver = (message: MailMessage) => Promise<void>;

export interface OutboxOptions {
  /** The first retry's delay; each next one doubles, up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxAttempts?: number;
  /** Messages this node holds at once; beyond it send() refuses with 503. */
  capacity?: number;
  /** How long past a message's due time its holder keeps it before another node may take it over. */
  takeoverMs?: number;
  /** How often a node looks for mail whose holder stopped; by default an eighth of takeoverMs, 250 ms to 15 s. */
  sweepMs?: number;
}

interface Held {
  record: MailOutboxRecord;
  message: MailMessage;
  timer: NodeJS.Timeout | null;
  sending: boolean;
}

/** At most this many messages are taken over per sweep. */
const SWEEP_BATCH = 20;

/** What a failure says about itself, for the log and the retry decision. */
export function failureOf(error: unknown): { code: string; responseCode: number | null; permanent: boolean } {
  const e = error as { code?: unknown; responseCode?: unknown };
  const responseCode = typeof e?.responseCode === 'number' ? e.responseCode : null;
  const code = typeof e?.code === 'string' ? e.code : responseCode !== null ? `SMTP_${responseCode}` : 'UNKNOWN';
  return { code, responseCode, permanent: responseCode !== null && responseCode >= 500 && responseCode < 600 };
}

export class OutboxMailer implements Mailer {
  private readonly held = new Map<string, Held>();
  private readonly inFlight = new Set<Promise<void>>();
  private counts = { sent: 0, retried: 0, failed: 0 };
  private closed = false;
  private sweeping: Promise<void> | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxAttempts: number;
  private readonly capacity: number;
  private readonly takeoverMs: number;
  private readonly sweepMs: number;

  constructor(
    private readonly deliver: Deliver,
    private readonly outbox: Collection<MailOutboxRecord>,
    private readonly key: Buffer,
    private readonly logger: Logger,
    options: OutboxOptions = {},
  ) {
    this.baseDelayMs = options.baseDelayMs ?? 2_000;
    this.maxDelayMs = options.maxDelayMs ?? 10 * 60_000;
    this.maxAttempts = options.maxAttempts ?? 12;
    this.capacity = options.capacity ?? 10_000;
    this.takeoverMs = options.takeoverMs ?? 120_000;
    this.sweepMs = options.sweepMs ?? Math.min(15_000, Math.max(250, Math.round(this.takeoverMs / 8)));
  }

  /** Starts looking for mail whose holder stopped: once now (a restart finds what its predecessor left), then every sweepMs. */
  start(): void {
    const next = () => {
      if (this.closed) return;
      this.sweepTimer = setTimeout(
        () => void this.sweep().finally(next),
        Math.round(this.sweepMs * (0.75 + Math.random() / 2)),
      );
      this.sweepTimer.unref();
    };
    void this.sweep().finally(next);
  }

  async send(message: MailMessage): Promise<void> {
    if (this.closed)
      throw new AppError('SERVICE_UNAVAILABLE', 'The node is shutting down; mail cannot be queued.', undefined, {
        'retry-after': '1',
      });
    if (this.held.size >= this.capacity) {
      this.logger.error(
        { to: message.to, subject: message.subject, queued: this.held.size },
        'mail refused: the queue is full',
      );
      throw new AppError('SERVICE_UNAVAILABLE', 'Too much mail is waiting to be sent; retry later.', undefined, {
        'retry-after': '60',
      });
    }
    const now = Date.now();
    const record: MailOutboxRecord = {
      _id: randomUUID(),
      version: 1,
      sealed: sealMail(this.key, message),
      attempts: 0,
      heldUntil: now + this.takeoverMs,
      createdAt: now,
    };
    await this.outbox.insert(record);
    const entry: Held = { record, message, timer: null, sending: false };
    this.held.set(record._id, entry);
    this.attempt(entry);
  }

  stats(): MailStats {
    return { queued: this.held.size, ...this.counts };
  }

  async close(graceMs: number): Promise<void> {
    this.closed = true;
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    await this.sweeping;
    for (const entry of this.held.values()) if (entry.timer) clearTimeout(entry.timer);
    if (this.inFlight.size)
      await Promise.race([
        Promise.allSettled([...this.inFlight]),
        new Promise((resolve) => setTimeout(resolve, graceMs).unref()),
      ]);
    // What is left waits in the outbox; handing it back lets another node (or the next start) send it at once.
    for (const entry of [...this.held.values()].filter((e) => !e.sending)) await this.handBack(entry);
  }

  /**
   * One attempt, counted in flight until its outcome is written, so that close() waits for it.
   * `renew`: this node's own next attempt renews the hold first (a slow attempt is not taken
   * over); a node that began closing meanwhile hands the message back instead of sending it.
   */
  private attempt(entry: Held, renew = false): void {
    entry.timer = null;
    entry.sending = true;
    const run = (async () => {
      if (renew) {
        const kept = await this.write(entry, { heldUntil: Date.now() + this.takeoverMs });
        if (!kept || this.closed) {
          entry.sending = false;
          if (kept) await this.handBack(entry);
          return;
        }
      }
      try {
        await this.deliver(entry.message);
      } catch (e) {
        return this.failed(entry, e);
      }
      return this.delivered(entry);
    })();
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  private about(entry: Held, attempts = entry.record.attempts) {
    return { mailId: entry.record._id, to: entry.message.to, subject: entry.message.subject, attempts };
  }

  private async delivered(entry: Held): Promise<void> {
    entry.sending = false;
    this.held.delete(entry.record._id);
    this.counts.sent++;
    const attempts = entry.record.attempts + 1;
    if (attempts > 1) this.logger.info(this.about(entry, attempts), 'mail delivered after retrying');
    await this.remove(entry);
  }

  private async failed(entry: Held, error: unknown): Promise<void> {
    entry.sending = false;
    const attempts = entry.record.attempts + 1;
    const { code, responseCode, permanent } = failureOf(error);
    const about = {
      ...this.about(entry, attempts),
      code,
      responseCode,
      reason: (error as Error)?.message?.slice(0, 300),
    };
    if (permanent || attempts >= this.maxAttempts) {
      this.held.delete(entry.record._id);
      this.counts.failed++;
      this.logger.error(
        about,
        permanent ? 'mail refused permanently by the server; not retried' : 'mail given up after retrying',
      );
      await this.remove(entry);
      return;
    }
    if (this.closed) {
      await this.handBack(entry, attempts);
      return;
    }
    const ceiling = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempts - 1));
    const delayMs = Math.round(ceiling * (0.5 + Math.random() / 2)); // jitter: a recovering server is not hit by every message at once
    const kept = await this.write(entry, { attempts, heldUntil: Date.now() + delayMs + this.takeoverMs });
    if (!kept) return;
    this.counts.retried++;
    this.logger.warn({ ...about, retryInMs: delayMs }, 'mail not sent; retrying');
    entry.timer = setTimeout(() => {
      if (!this.closed) this.attempt(entry, true);
    }, delayMs);
    entry.timer.unref();
  }

  /**
   * Writes `changes` at the held version; false (and the message dropped here) when another node
   * took it over meanwhile or the store failed, in which case the record stays for a sweep.
   */
  private async write(
    entry: Held,
    changes: Partial<Pick<MailOutboxRecord, 'attempts' | 'heldUntil'>>,
  ): Promise<boolean> {
    try {
      const updated = await this.outbox.update(entry.record._id, entry.record.version, changes);
      if (updated) {
        entry.record = updated;
        return true;
      }
      this.logger.info(this.about(entry), 'mail taken over by another node');
    } catch (e) {
      this.logger.warn(
        { ...this.about(entry), err: e },
        'mail outbox unavailable; the message waits there for a sweep',
      );
    }
    this.held.delete(entry.record._id);
    return false;
  }

  private async handBack(entry: Held, attempts = entry.record.attempts): Promise<void> {
    this.held.delete(entry.record._id);
    this.logger.warn(
      this.about(entry, attempts),
      'mail not sent before the node stopped; it waits in the outbox for another node or the next start',
    );
    await this.outbox
      .update(entry.record._id, entry.record.version, { attempts, heldUntil: Date.now() })
      .catch(() => undefined);
  }

  private async remove(entry: Held): Promise<void> {
    try {
      await this.outbox.delete(entry.record._id); // whatever its version: a node that took it over meanwhile must not send it again
    } catch (e) {
      this.logger.error({ ...this.about(entry), err: e }, 'mail done but still in the outbox: it may be sent again');
    }
  }

  /** Takes over mail whose holder stopped. */
  private sweep(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.sweeping ??= this.takeOver().finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  private async takeOver(): Promise<void> {
    try {
      const now = Date.now();
      const lapsed = await this.outbox.find(
        { heldUntil: { $lte: now } },
        { sort: [['heldUntil', 1]], limit: SWEEP_BATCH },
      );
      for (const record of lapsed) {
        if (this.closed || this.held.size >= this.capacity) return;
        if (this.held.has(record._id)) continue;
        let message: MailMessage;
        try {
          message = openMail(this.key, record.sealed);
        } catch {
          // Left for an operator (this node may be the one with the wrong SECRET_KEY), and put back
          // behind the others, so it neither blocks the sweep nor fills the log.
          this.logger.error(
            { mailId: record._id, attempts: record.attempts },
            'mail in the outbox cannot be opened (altered, or sealed under another SECRET_KEY); left there',
          );
          await this.outbox.update(record._id, record.version, { heldUntil: Date.now() + this.takeoverMs });
          continue;
        }
        const taken = await this.outbox.update(record._id, record.version, { heldUntil: Date.now() + this.takeoverMs });
        if (!taken) continue; // another node's sweep was first
        const entry: Held = { record: taken, message, timer: null, sending: false };
        this.held.set(taken._id, entry);
        this.logger.info(this.about(entry), 'mail taken over from the outbox: its holder stopped');
        this.attempt(entry);
      }
    } catch (e) {
      this.logger.warn({ err: e }, 'mail outbox sweep failed; trying again later');
    }
  }
}
