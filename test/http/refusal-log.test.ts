// Spent budgets' refusals in the log: a caller's first on a route has its request line, the next
// within the quiet period are counted and logged as one line when it ends, and a refusal after it
// has its request line again.
import { describe, expect, it } from 'vitest';
import { RefusalLog } from '../../src/http/refusal-log.js';

function setUp() {
  const lines: { fields: Record<string, unknown>; msg: string }[] = [];
  let now = Date.parse('2026-11-29T12:00:00Z');
  const log = new RefusalLog(
    { info: (fields: Record<string, unknown>, msg: string) => void lines.push({ fields, msg }) } as never,
    () => now,
    60_000,
  );
  return { log, lines, later: (ms: number) => (now += ms) };
}

describe('the refusal log', () => {
  it('logs a caller’s first refusal on a route, counts the next, and writes them as one line at the period’s end', () => {
    const { log, lines, later } = setUp();
    expect(log.logs('agent:a', 'GET /api/status')).toBe(true);
    expect(log.logs('agent:a', 'GET /api/status')).toBe(false);
    expect(log.logs('agent:a', 'GET /api/status')).toBe(false);
    expect(log.logs('agent:a', 'POST /api/claim')).toBe(true); // another route: its own line
    expect(log.logs('agent:b', 'GET /api/status')).toBe(true); // another caller: its own line
    later(5_000);
    log.flush();
    expect(lines).toEqual([
      {
        msg: 'requests refused',
        fields: {
          refused: 'agent:a',
          route: 'GET /api/status',
          status: 429,
          count: 2,
          since: '2026-11-29T12:00:00.000Z',
          until: '2026-11-29T12:00:05.000Z',
        },
      },
    ]); // those refused once have said all in their request line
    // A new period: the next refusal has its request line again.
    expect(log.logs('agent:a', 'GET /api/status')).toBe(true);
    expect(log.logs('agent:a', 'GET /api/status')).toBe(false);
    log.close();
    expect(lines.map((l) => l.fields.count)).toEqual([2, 1]);
    // Closed, nothing would write a count: a refusal after (a request that outlived the shutdown's wait) has its line.
    expect(log.logs('agent:a', 'GET /api/status')).toBe(true);
    expect(log.logs('agent:a', 'GET /api/status')).toBe(true);
  });

  it('counts the refusals of callers past 10,000 together, on one line', () => {
    const { log, lines } = setUp();
    for (let i = 0; i < 10_000; i++) expect(log.logs(`agent:${i}`, 'GET /api/status')).toBe(true);
    expect(log.logs('agent:new', 'GET /api/status')).toBe(false);
    expect(log.logs('agent:newer', 'POST /api/claim')).toBe(false);
    expect(log.logs('agent:0', 'GET /api/status')).toBe(false); // counted on its own line
    log.close();
    expect(lines.map((l) => [l.fields.refused, l.fields.route, l.fields.count])).toEqual([
      ['agent:0', 'GET /api/status', 1],
      ['others', null, 2],
    ]);
  });
});
