// GET /api/items: the board's items a page at a time, optionally in one state (the browser
// board's columns read it). Over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

describe('GET /api/items', () => {
  it('pages through every item once, and filters by state', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('lister');
    const made = await agent.post('/api/items/batch', {
      items: Array.from({ length: 25 }, (_, i) => ({
        title: `item ${i}`,
        ...(i % 5 === 4 ? { dependsOn: ['W-1'] } : {}),
      })),
    });
    expect(made.status).toBe(201);
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const page: { status: number; body: { items: { workId: string }[]; next: string | null } } = await agent.get(
        `/api/items?limit=7${after ? `&after=${after}` : ''}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(7);
      seen.push(...page.body.items.map((i) => i.workId));
      after = page.body.next;
    } while (after);
    expect(seen.sort()).toEqual(made.body.items.map((i: { workId: string }) => i.workId).sort());
    const pending = await agent.get('/api/items?state=pending');
    expect(pending.body.items.map((i: { title: string }) => i.title).sort()).toEqual([
      'item 14',
      'item 19',
      'item 24',
      'item 4',
      'item 9',
    ]);
    expect(pending.body.next).toBeNull();
    expect((await agent.get('/api/items?state=sideways')).status).toBe(400);
  });
});
