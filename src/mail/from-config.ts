// Picks the mail adapter from the configuration (called by the composition root): SMTP behind the
// store's outbox when SMTP_URL is set, else the log transport, announced loudly, since with it no
// address confirmation, invitation or password reset reaches anyone who cannot read the logs.
import type { Logger } from 'pino';
import type { Store } from '../../store/ports/store.js';
import type { ServerKeys } from '../auth/keys.js';
import type { Config } from '../config.js';
import { logMailer, type Mailer } from './mailer.js';
import { OutboxMailer, type OutboxOptions } from './outbox.js';
import { smtpTransport } from './smtp.js';

export function mailerFrom(
  config: Pick<Config, 'mail'>,
  deps: { store: Pick<Store, 'mailOutbox'>; keys: Pick<ServerKeys, 'mail'> },
  logger: Logger,
  options: OutboxOptions = {},
): Mailer {
  if (!config.mail.smtpUrl) {
    logger.warn(
      'MAIL GOES TO THE LOG ONLY (no SMTP_URL): confirmation, invitation and password-reset links are written to this log and reach nobody else. ' +
        'Fine for development; set SMTP_URL (and MAIL_FROM) to send mail.',
    );
    return logMailer(logger);
  }
  const smtp = smtpTransport({ url: config.mail.smtpUrl, from: config.mail.from }, logger);
  void smtp.verify();
  const outbox = new OutboxMailer(smtp.deliver, deps.store.mailOutbox, deps.keys.mail, logger, {
    takeoverMs: config.mail.takeoverMs,
    ...options,
  });
  outbox.start();
  return {
    send: (message) => outbox.send(message),
    stats: () => outbox.stats(),
    async close(graceMs) {
      await outbox.close(graceMs);
      smtp.close();
    },
  };
}
