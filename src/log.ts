// The process logger: structured JSON, with credentials redacted wherever they might appear.
import { pino, type Logger } from 'pino';

export type { Logger };

const REDACT = [
  'password', 'currentPassword', 'newPassword', 'token', 'secret', 'cookie', 'authorization',
  '*.password', '*.currentPassword', '*.newPassword', '*.token', '*.secret', '*.cookie', '*.authorization',
  'req.headers.cookie', 'req.headers.authorization', 'res.headers["set-cookie"]',
];

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { pid: process.pid } });
}
