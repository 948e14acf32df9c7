// Mail that cannot be sent right now is not lost: each message is attempted, and a failure that
// may pass (a connection refused, a timeout, a 4xx reply) is tried again with exponential backoff
// and jitter, up to MAX_ATTEMPTS (about an hour). A permanent refusal (a 5xx reply) or the last
// failed attempt is logged at error level with its code, never silently dropped. The operation
// that asked for the mail has already answered as the contract says (it waits for acceptance into
// this queue, not for delivery); only a full queue refuses, with 503.
// The queue lives in this process's memory: a node that stops logs each message it still held.
import type { Logger } from 'pino';
import { AppError } from '../errors/app-error.js';
import type { MailMessage, Mailer, MailStats } from './mailer.js';

/** Delivers one message now, or throws (nodemailer's errors carry `code` and `responseCode`). */
export type Deliver = (message: MailMessage) => Promise<void>;

export interface QueueOptions {
  /** The first retry's delay; each next one doubles, up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxAttempts?: number;
  /** Messages held at once; beyond it send() refuses with 503. */
  capacity?: number;
}

interface Entry {
  message: MailMessage;
  attempts: number;
  timer: NodeJS.Timeout | null;
}

/** What a failure says about itself, for the log and the retry decision. */
export function failureOf(error: unknown): { code: string; responseCode: number | null; permanent: boolean } {
  const e = error as { code?: unknown; responseCode?: unknown };
  const responseCode = typeof e?.responseCode === 'number' ? e.responseCode : null;
  const code = typeof e?.code === 'string' ? e.code : responseCode !== null ? `SMTP_${responseCode}` : 'UNKNOWN';
  return { code, responseCode, permanent: responseCode !== null && responseCode >= 500 && responseCode < 600 };
}

export class RetryingMailer implements Mailer {
  private readonly waiting = new Set<Entry>();
  private readonly inFlight = new Set<Promise<void>>();
  private counts = { sent: 0, retried: 0, failed: 0 };
  private closed = false;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxAttempts: number;
  private readonly capacity: number;

  constructor(
    private readonly deliver: Deliver,
    private readonly logger: Logger,
    options: QueueOptions = {},
  ) {
    this.baseDelayMs = options.baseDelayMs ?? 2_000;
    this.maxDelayMs = options.maxDelayMs ?? 10 * 60_000;
    this.maxAttempts = options.maxAttempts ?? 12;
    this.capacity = options.capacity ?? 10_000;
  }

  async send(message: MailMessage): Promise<void> {
    if (this.closed) throw new AppError('SERVICE_UNAVAILABLE', 'The node is shutting down; mail cannot be queued.', undefined, { 'retry-after': '1' });
    if (this.waiting.size >= this.capacity) {
      this.logger.error({ to: message.to, subject: message.subject, queued: this.waiting.size }, 'mail refused: the queue is full');
      throw new AppError('SERVICE_UNAVAILABLE', 'Too much mail is waiting to be sent; retry later.', undefined, { 'retry-after': '60' });
    }
    const entry: Entry = { message, attempts: 0, timer: null };
    this.waiting.add(entry);
    this.attempt(entry);
  }

  stats(): MailStats {
    return { queued: this.waiting.size, ...this.counts };
  }

  async close(graceMs: number): Promise<void> {
    this.closed = true;
    for (const entry of this.waiting) if (entry.timer) clearTimeout(entry.timer);
    if (this.inFlight.size) await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    for (const entry of this.waiting) {
      this.counts.failed++;
      this.logger.error({ to: entry.message.to, subject: entry.message.subject, attempts: entry.attempts }, 'mail not delivered: the node stopped before it could be sent');
    }
    this.waiting.clear();
  }

  private attempt(entry: Entry): void {
    entry.timer = null;
    entry.attempts++;
    const run = this.deliver(entry.message).then(
      () => {
        this.waiting.delete(entry);
        this.counts.sent++;
        if (entry.attempts > 1) this.logger.info({ to: entry.message.to, subject: entry.message.subject, attempts: entry.attempts }, 'mail delivered after retrying');
      },
      (e: unknown) => this.failed(entry, e),
    );
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  private failed(entry: Entry, error: unknown): void {
    const { code, responseCode, permanent } = failureOf(error);
    const about = { to: entry.message.to, subject: entry.message.subject, attempts: entry.attempts, code, responseCode, reason: (error as Error)?.message?.slice(0, 300) };
    if (permanent || entry.attempts >= this.maxAttempts || this.closed) {
      this.waiting.delete(entry);
      this.counts.failed++;
      this.logger.error(about, permanent ? 'mail refused permanently by the server; not retried' : 'mail given up after retrying');
      return;
    }
    const ceiling = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (entry.attempts - 1));
    const delayMs = Math.round(ceiling * (0.5 + Math.random() / 2)); // jitter: a recovering server is not hit by every message at once
    this.counts.retried++;
    this.logger.warn({ ...about, retryInMs: delayMs }, 'mail not sent; retrying');
    entry.timer = setTimeout(() => this.attempt(entry), delayMs);
    entry.timer.unref();
  }
}
