// The process logger: structured JSON, with credentials redacted wherever they might appear.
import { pino, type Logger } from 'pino';

export type { Logger };

const REDACT = [
  'password', 'currentPassword', 'newPassword', 'token', 'secret', 'cookie', 'authorization',
  '*.password', '*.currentPassword', '*.newPassword', '*.token', '*.secret', '*.cookie', '*.authorization',
  'req.headers.cookie', 'req.headers.authorization', 'res.headers["set-cookie"]',
];

/** What may wait in memory for a stdout that does not drain; beyond it lines are dropped, not the process. */
const BUFFER_LIMIT = 16 * 2 ** 20;

/**
 * The process logger, written to stdout asynchronously: no request waits for a write (a slow pipe,
 * a collector that stalls). What is still buffered is written out when the process exits.
 */
export function createLogger(level: string): Logger {
  const destination = pino.destination({ dest: 1, sync: false, maxLength: BUFFER_LIMIT });
  process.on('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // not open yet, or stdout is gone: nothing more can be written
    }
  });
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { pid: process.pid } }, destination);
}
