// The request line is written by hand (src/log.ts requestLogger): it must read exactly as the
// line pino itself would write for the same fields, bindings included, and follow the level.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { requestLogger } from '../src/log.js';

function capture(level: string) {
  const lines: string[] = [];
  const logger = pino({ level, base: { pid: 4242 } }, { write: (s: string) => void lines.push(s) });
  return { logger, lines };
}

describe('the request line', () => {
  it('reads as pino’s own line for the same fields, with the logger’s bindings, key for key', () => {
    const { logger, lines } = capture('info');
    const child = logger.child({ node: 'node-a' });
    const line = { reqId: 'req-"quoted"-1', route: 'GET /api/status', status: 200, durationMs: 1.25 };
    child.info(line, 'request');
    requestLogger(child)(line);
    requestLogger(child)({ ...line, route: null, status: 404 });
    expect(lines).toHaveLength(3);
    const [ours, theirs] = [JSON.parse(lines[1]!), JSON.parse(lines[0]!)];
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    expect({ ...ours, time: 0 }).toEqual({ ...theirs, time: 0 });
    expect(ours.time).toBeGreaterThanOrEqual(theirs.time);
    expect(JSON.parse(lines[2]!)).toMatchObject({ route: null, status: 404, node: 'node-a', pid: 4242, msg: 'request' });
  });

  it('writes nothing below info, and follows a level changed later', () => {
    const { logger, lines } = capture('warn');
    const log = requestLogger(logger);
    log({ reqId: 'r', route: 'GET /healthz', status: 200, durationMs: 0.1 });
    expect(lines).toEqual([]);
    logger.level = 'info';
    log({ reqId: 'r', route: 'GET /healthz', status: 200, durationMs: 0.1 });
    expect(lines).toHaveLength(1);
  });

  it('goes through pino when the logger’s time is not the default epoch', () => {
    const lines: string[] = [];
    const logger = pino({ timestamp: pino.stdTimeFunctions.isoTime }, { write: (s: string) => void lines.push(s) });
    requestLogger(logger)({ reqId: 'r', route: 'GET /healthz', status: 200, durationMs: 0.1 });
    expect(JSON.parse(lines[0]!).time).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});
