// Picks the mail adapter from the configuration (called by the composition root): SMTP behind the
// retrying queue when SMTP_URL is set, else the log transport, announced loudly, since with it no
// address confirmation, invitation or password reset reaches anyone who cannot read the logs.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { logMailer, type Mailer } from './mailer.js';
import { RetryingMailer, type QueueOptions } from './queue.js';
import { smtpTransport } from './smtp.js';

export function mailerFrom(config: Pick<Config, 'mail'>, logger: Logger, queue: QueueOptions = {}): Mailer {
  if (!config.mail.smtpUrl) {
    logger.warn(
      'MAIL GOES TO THE LOG ONLY (no SMTP_URL): confirmation, invitation and password-reset links are written to this log and reach nobody else. ' +
        'Fine for development; set SMTP_URL (and MAIL_FROM) to send mail.',
    );
    return logMailer(logger);
  }
  const smtp = smtpTransport({ url: config.mail.smtpUrl, from: config.mail.from }, logger);
  void smtp.verify();
  const queued = new RetryingMailer(smtp.deliver, logger, queue);
  return {
    send: (message) => queued.send(message),
    stats: () => queued.stats(),
    async close(graceMs) {
      await queued.close(graceMs);
      smtp.close();
    },
  };
}
