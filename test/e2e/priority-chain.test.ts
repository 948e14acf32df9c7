// The priority chain (DOMAIN.md): a new item has no rank; ready items go ranked first (lowest
// rank first), then by priority (0 first), then by creation. Over real HTTP.
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

describe('the priority chain', () => {
  it('orders by priority, then creation, until a reorder ranks items ahead of everything unranked', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('planner');
    const made = await agent.post('/api/items/batch', {
      items: [3, 0, 2, 0, 4, 1].map((priority, i) => ({ title: `p${priority} #${i}`, priority })),
    });
    expect(made.status).toBe(201);
    const ids: string[] = made.body.items.map((i: { workId: string }) => i.workId);
    expect(made.body.items.every((i: { rank: number | null }) => i.rank === null)).toBe(true);
    const head = async () =>
      (await board.owner.get('/api/status')).body.chainHead.map((i: { title: string }) => i.title);
    expect(await head()).toEqual(['p0 #1', 'p0 #3', 'p1 #5', 'p2 #2', 'p3 #0', 'p4 #4']);

    expect((await board.owner.post('/api/items/reorder', { workIds: [ids[4], ids[0]] })).status).toBe(200);
    expect(await head()).toEqual(['p4 #4', 'p3 #0', 'p0 #1', 'p0 #3', 'p1 #5', 'p2 #2']);

    // Pull-next takes the chain in that order.
    const pulled: string[] = [];
    for (let i = 0; i < 3; i++) {
      const claim = await (await board.agent(`puller-${i}`)).post('/api/claim', {});
      expect(claim.status).toBe(200);
      pulled.push(claim.body.workId ?? claim.body.item?.workId);
    }
    expect(pulled).toEqual([ids[4], ids[0], ids[1]]);
  });
});
