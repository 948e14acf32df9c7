// SMTP through nodemailer, chosen by SMTP_URL (smtp://user:pass@host:587, or smtps:// for TLS
// from the first byte; smtp:// upgrades with STARTTLS when the server offers it). A pool of a few
// connections is kept open, so a burst of mail does not open one connection per message.
// The URL carries the password: it is never logged, only the host it names.
import nodemailer from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type { Logger } from 'pino';
import type { Deliver } from './outbox.js';

export interface SmtpOptions {
  url: string;
  /** The sender, "Name <address>" or an address (MAIL_FROM). */
  from: string;
}

export interface SmtpTransport {
  deliver: Deliver;
  /** Checks the connection and credentials once (start-up log); never throws. */
  verify(): Promise<void>;
  close(): void;
}

/** host:port of an SMTP URL, without its credentials. */
export function smtpHost(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}`;
}

export function smtpTransport(options: SmtpOptions, logger: Logger): SmtpTransport {
  const pooled: SMTPPool.Options = {
    url: options.url,
    pool: true,
    maxConnections: 3,
    // Fail an attempt in seconds rather than minutes: the queue retries it.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  };
  const transporter = nodemailer.createTransport(pooled);
  return {
    async deliver(message) {
      await transporter.sendMail({ from: options.from, to: message.to, subject: message.subject, text: message.text });
    },
    async verify() {
      const host = smtpHost(options.url);
      try {
        await transporter.verify();
        logger.info({ smtp: host, from: options.from }, 'mail: sending over SMTP');
      } catch (e) {
        const err = e as { code?: string; responseCode?: number };
        logger.warn(
          { smtp: host, code: err.code, responseCode: err.responseCode },
          'mail: the SMTP server does not answer yet; messages wait and are retried',
        );
      }
    },
    close: () => transporter.close(),
  };
}
