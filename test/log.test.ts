// The request line is written by hand (src/log.ts requestLogger): it must read exactly as the
// line pino itself would write for the same fields, bindings included, and follow the level. A
// turn's lines reach the destination in one write.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { requestLogger } from '../src/log.js';

function capture(level: string) {
  const writes: string[] = [];
  const logger = pino({ level, base: { pid: 4242 } }, { write: (s: string) => void writes.push(s) });
  return { logger, writes, lines: () => writes.join('').split('\n').filter(Boolean) };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the request line', () => {
  it('reads as pino’s own line for the same fields, with the logger’s bindings, key for key', async () => {
    const { logger, lines } = capture('info');
    const child = logger.child({ node: 'node-a' });
    const line = { reqId: 'req-"quoted"-1', route: 'GET /api/status', status: 200, durationMs: 1.25 };
    child.info(line, 'request');
    requestLogger(child)(line);
    requestLogger(child)({ ...line, route: null, status: 404 });
    await nextTurn();
    expect(lines()).toHaveLength(3);
    const [ours, theirs] = [JSON.parse(lines()[1]!), JSON.parse(lines()[0]!)];
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    expect({ ...ours, time: 0 }).toEqual({ ...theirs, time: 0 });
    expect(ours.time).toBeGreaterThanOrEqual(theirs.time);
    expect(JSON.parse(lines()[2]!)).toMatchObject({
      route: null,
      status: 404,
      node: 'node-a',
      pid: 4242,
      msg: 'request',
    });
  });

  it('writes nothing below info, and follows a level changed later', async () => {
    const { logger, lines } = capture('warn');
    const log = requestLogger(logger);
    log({ reqId: 'r', route: 'GET /healthz', status: 200, durationMs: 0.1 });
    await nextTurn();
    expect(lines()).toEqual([]);
    logger.level = 'info';
    log({ reqId: 'r', route: 'GET /healthz', status: 200, durationMs: 0.1 });
    await nextTurn();
    expect(lines()).toHaveLength(1);
  });

  it('writes a turn’s lines in one write, in order, when the turn ends; a batch past 16 KB goes at once', async () => {
    const { logger, writes, lines } = capture('info');
    const log = requestLogger(logger);
    for (let i = 0; i < 3; i++) log({ reqId: `turn-1-${i}`, route: 'GET /api/status', status: 200, durationMs: 0.1 });
    expect(writes).toEqual([]); // not one write per line
    await nextTurn();
    expect(writes).toHaveLength(1);
    log({ reqId: 'turn-2', route: 'GET /api/status', status: 200, durationMs: 0.1 });
    await nextTurn();
    expect(writes).toHaveLength(2);
    expect(lines().map((l) => JSON.parse(l).reqId)).toEqual(['turn-1-0', 'turn-1-1', 'turn-1-2', 'turn-2']);

    // A busy turn: its lines go out as they pass 16 KB, the rest when it ends; none lost, none twice.
    const many = 200; // about 130 characters each: 26 KB
    for (let i = 0; i < many; i++) log({ reqId: `busy-${i}`, route: 'GET /api/status', status: 200, durationMs: 0.1 });
    expect(writes).toHaveLength(3);
    expect(writes[2]!.length).toBeGreaterThanOrEqual(16 * 1024);
    await nextTurn();
    expect(writes).toHaveLength(4);
    expect(
      lines()
        .slice(4)
        .map((l) => JSON.parse(l).reqId),
    ).toEqual(Array.from({ length: many }, (_, i) => `busy-${i}`));
  });

  it('goes through pino when the logger’s time is not the default epoch', () => {
    const lines: string[] = [];
    const logger = pino({ timestamp: pino.stdTimeFunctions.isoTime }, { write: (s: string) => void lines.push(s) });
    requestLogger(logger)({ reqId: 'r', route: 'GET /healthz', status: 200, durationMs: 0.1 });
    expect(JSON.parse(lines[0]!).time).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});
