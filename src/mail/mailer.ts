// The mail port. The default adapter writes each message to the log (development: there is no
// mail transport here); tests capture messages instead.
import type { Logger } from 'pino';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** Logs the whole message, link included: links are single-use and expire within hours. */
export function logMailer(logger: Logger): Mailer {
  return {
    async send(message) {
      logger.info({ mail: message }, 'mail (log transport)');
    },
  };
}
