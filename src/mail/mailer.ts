// The mail port. Adapters: the log transport (development only: each message, link included, goes
// to the log), SMTP through nodemailer behind the store's outbox (src/mail/smtp.ts, outbox.ts), and
// in tests a capturing one. `send` resolves once the message is accepted for delivery (written to the outbox); what
// happens to it afterwards is the adapter's to report (logs, stats).
import type { Logger } from 'pino';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Counts since start, for metrics. */
export interface MailStats {
  /** Held by this node: being sent, or waiting for their next attempt. */
  queued: number;
  sent: number;
  /** Attempts that failed and were scheduled again. */
  retried: number;
  /** Messages given up (a permanent refusal, or attempts exhausted). */
  failed: number;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  stats?(): MailStats;
  /** Stops retrying; waits up to `graceMs` for attempts in flight; reports what was not sent. */
  close?(graceMs: number): Promise<void>;
}

/** Logs the whole message, link included: links are single-use and expire within hours. */
export function logMailer(logger: Logger): Mailer {
  let sent = 0;
  return {
    async send(message) {
      logger.info({ mail: message }, 'mail (log transport)');
      sent++;
    },
    stats: () => ({ queued: 0, sent, retried: 0, failed: 0 }),
  };
}
