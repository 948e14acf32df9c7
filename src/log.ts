// The process logger: structured JSON, with credentials redacted wherever they might appear.
import { pino, type Logger } from 'pino';

export type { Logger };

const REDACT = [
  'password',
  'currentPassword',
  'newPassword',
  'token',
  'secret',
  'cookie',
  'authorization',
  '*.password',
  '*.currentPassword',
  '*.newPassword',
  '*.token',
  '*.secret',
  '*.cookie',
  '*.authorization',
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
];

/** What may wait in memory for a stdout that does not drain; beyond it lines are dropped, not the process. */
const BUFFER_LIMIT = 16 * 2 ** 20;

/** Lines are written once this much is waiting, or every FLUSH_MS, whichever comes first. */
const WRITE_BATCH = 8 * 1024;
const FLUSH_MS = 100;

/** Request lines a turn may gather before they are written anyway (characters: sonic-boom's own write size). */
const REQUEST_BATCH = 16 * 1024;

/** Request loggers' lines of this turn, not yet with their destination: written before it is flushed at exit. */
const unwritten = new Set<() => void>();

/**
 * The process logger, written to stdout asynchronously: no request waits for a write (a slow pipe,
 * a collector that stalls). Lines go out in batches (a write per line costs more than the line):
 * at most FLUSH_MS late. What is still buffered is written out when the process exits.
 */
export function createLogger(level: string): Logger {
  const destination = pino.destination({
    dest: 1,
    sync: false,
    minLength: WRITE_BATCH,
    periodicFlush: FLUSH_MS,
    maxLength: BUFFER_LIMIT,
  });
  process.on('exit', () => {
    for (const flush of [...unwritten]) flush();
    try {
      destination.flushSync();
    } catch {
      // not open yet, or stdout is gone: nothing more can be written
    }
  });
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { pid: process.pid } }, destination);
}

export interface RequestLine {
  reqId: string;
  route: string | null;
  status: number;
  durationMs: number;
}

type Internals = {
  [pino.symbols.streamSym]?: { write(line: string): unknown };
  [pino.symbols.chindingsSym]?: string;
  [pino.symbols.timeSym]?: unknown;
};

/**
 * Logs each answered request at info, as pino would (`{"level":30,"time":…,<bindings>,"reqId":…,
 * "route":…,"status":…,"durationMs":…,"msg":"request"}`), but written straight to the logger's
 * destination: the line carries only an id, a route, a status and a time, so it needs none of
 * pino's generic serialization and redaction, which cost more than the request they describe.
 * A logger whose time or destination is not pino's default gets it through `info`.
 */
export function requestLogger(logger: Logger): (line: RequestLine) => void {
  const internals = logger as unknown as Internals;
  const stream = internals[pino.symbols.streamSym];
  const bindings = internals[pino.symbols.chindingsSym];
  if (!stream || typeof bindings !== 'string' || internals[pino.symbols.timeSym] !== pino.stdTimeFunctions.epochTime) {
    return (line) => logger.info(line, 'request');
  }
  // A turn's lines go to the destination in one write: sonic-boom measures the whole text it holds
  // on every write (Buffer.byteLength of a string built by +=, which copies it flat), so a write
  // per line cost a copy of up to WRITE_BATCH bytes per request.
  let batch = '';
  const flush = () => {
    unwritten.delete(flush);
    const lines = batch;
    batch = '';
    if (lines !== '') stream.write(lines);
  };
  return ({ reqId, route, status, durationMs }) => {
    if (!logger.isLevelEnabled('info')) return;
    if (batch === '') {
      unwritten.add(flush);
      setImmediate(flush);
    }
    batch += `{"level":30,"time":${Date.now()}${bindings},"reqId":${JSON.stringify(reqId)},"route":${JSON.stringify(route)},"status":${status},"durationMs":${durationMs},"msg":"request"}\n`;
    if (batch.length >= REQUEST_BATCH) flush();
  };
}
