// /mcp's notice check against a board whose log holds more lease endings than one check reads
// (10 pages of 100): the check reads at most that much, remembers the stretch it left, and the next
// checks read it, so a quiet caller's loss behind 2,500 others is told (once) a few calls later.
// The board here is a stand-in answering the two notice reads from an event list.
import { expect, it } from 'vitest';
import type { BoardClient } from '../../src/mcp/client.js';
import { LogSession, ToldMemory } from '../../src/mcp/log-session.js';

const ME = 'agent:quiet';
const T = Date.parse('2030-01-01T12:00:00Z');

interface Ended {
  seq: number;
  type: string;
  workId: string;
  at: string;
  data: { lease: { holder: string; purpose: 'work'; fencingToken: number } };
}

/** The caller's own lease ended first (30 min ago), then 2,500 others (29 to 20 min ago). */
const log: Ended[] = Array.from({ length: 2501 }, (_, i) => ({
  seq: i + 1,
  type: 'lease.expired',
  workId: `W-${i + 1}`,
  at: new Date(i === 0 ? T - 30 * 60_000 : T - 29 * 60_000 + i * 200).toISOString(),
  data: { lease: { holder: i === 0 ? ME : 'agent:busy', purpose: 'work', fencingToken: i + 1 } },
}));

it('reads what a check cut short left in the next checks, and tells the loss behind it once', async () => {
  let pages = 0;
  const noticeClient = {
    async post(_path: string, { body }: { body: { from: string; before?: number; limit: number } }) {
      pages++;
      const older = log
        .filter((e) => Date.parse(e.at) >= Date.parse(body.from) && (body.before === undefined || e.seq < body.before))
        .reverse();
      const events = older.slice(0, body.limit);
      return { events, nextBefore: older.length > body.limit ? events.at(-1)!.seq : null };
    },
    async get() {
      return { shouts: [], next: null };
    },
  } as unknown as BoardClient;
  const memory = new ToldMemory();
  const check = async (now: number) => {
    pages = 0;
    const session = new LogSession({
      client: noticeClient,
      noticeClient,
      drew: () => true,
      query: {},
      principal: ME,
      now,
      memory,
    });
    const notices = await session.afterCall();
    return { notices, pages };
  };

  const told = [];
  for (let n = 0; n < 4; n++) {
    const { notices, pages } = await check(T + n * 1000);
    expect(pages).toBeLessThanOrEqual(10);
    told.push(...notices.map((x) => ({ check: n, ...x })));
  }
  expect(told).toEqual([expect.objectContaining({ check: 2, kind: 'lease.lost', workId: 'W-1', reason: 'expired' })]);
});
