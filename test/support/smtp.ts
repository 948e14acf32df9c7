// A real SMTP server in the test process (smtp-server, from nodemailer's project): it takes mail on
// a loopback port, keeps each message as received, and can be told to refuse (a reply code for
// the next N recipients) to prove that the node retries.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { until } from './until.js';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The raw message as sent (headers and body). */
  raw: string;
  /** The body with quoted-printable soft breaks and escapes undone. */
  body: string;
  subject: string;
}

export interface TestSmtp {
  port: number;
  url: string;
  received: ReceivedMail[];
  /** Recipients refused so far (each refusal one attempt of the sender's). */
  refusals: number;
  /** Refuses the next `times` recipients with `code` (451: try later; 550: never). */
  refuse(code: number, times: number): void;
  /** The next message to `to` whose subject matches, waiting up to `ms`. */
  next(to: string, subject: RegExp, ms?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export function decodeQuotedPrintable(text: string): string {
  return text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A header's RFC 2047 encoded words (=?UTF-8?Q?…?= and =?UTF-8?B?…?=) decoded; the space between two of them dropped. */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?([QB])\?([^?]*)\?=/gi, (_, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
            'latin1',
          ).toString('utf8'),
    );
}

export async function startSmtp(port = 0): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const refusing = { code: 0, times: 0 };
  const state = { refusals: 0 };
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: nothing to upgrade to (nodemailer would try STARTTLS if offered).
    disabledCommands: ['STARTTLS'],
    logger: false,
    // A sender's pooled connection stays open; closing the server waits this long for it, not 30 s.
    closeTimeout: 500,
    onRcptTo(address, _session, callback) {
      if (refusing.times > 0) {
        refusing.times--;
        state.refusals++;
        const error = Object.assign(new Error(refusing.code >= 500 ? 'mailbox unavailable' : 'try again later'), {
          responseCode: refusing.code,
        });
        return callback(error);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const [folded = '', ...rest] = raw.split(/\r?\n\r?\n/);
        const head = folded.replace(/\r?\n[ \t]+/g, ' ');
        const subject = decodeWords(/^Subject: (.*)$/im.exec(head)?.[1]?.trim() ?? '');
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          body: decodeQuotedPrintable(rest.join('\n\n')),
          subject,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.server.address() as AddressInfo).port;
  return {
    port: bound,
    url: `smtp://127.0.0.1:${bound}`,
    received,
    get refusals() {
      return state.refusals;
    },
    refuse(code, times) {
      refusing.code = code;
      refusing.times = times;
    },
    async next(to, subject, ms = 15_000) {
      const found = () => received.find((m) => m.to.includes(to) && subject.test(m.subject));
      await until(() => found() !== undefined, {
        timeout: ms,
        what: () =>
          `mail to ${to} matching ${subject} (received: ${received.map((m) => `${m.to.join(',')}: ${m.subject}`).join('; ') || 'none'})`,
      });
      return found()!;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
