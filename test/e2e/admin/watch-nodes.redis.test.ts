// Utilization across nodes: two nodes on one store and one Redis each tell the other their figures
// through the bus, so an operator asking either one sees both, with the other's own counts.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Client, type TestServer } from '../../support/server.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { newBoard } from '../../support/board.js';
import { twoNodesOnRedis, type RedisNodes } from '../../support/redis-nodes.js';
import { unique } from '../../support/temp.js';
import { until } from '../../support/until.js';

const url = inject('redisUrl');

interface Listed {
  nodeId: string;
  self: boolean;
  figures: { nodeId: string; requestsPerMinute: number; boardsActive: number; bus: string };
}

describe.skipIf(!url)('utilization across two nodes on Redis', () => {
  let nodes: RedisNodes | undefined;
  let a: TestServer;
  let b: TestServer;
  let idA: string;
  let idB: string;
  const opEmail = operatorEmail();
  beforeAll(async () => {
    nodes = await twoNodesOnRedis(url!, { env: { OPERATOR_EMAILS: opEmail } });
    ({ a, b } = nodes);
    [idA, idB] = nodes.nodeIds;
  });
  afterAll(() => nodes?.stop());

  it('lists both nodes on either one, each with its own figures', async () => {
    const op = (await confirmedOperator(a, opEmail)).client;
    // The same session, asking node b (one store: the session is known to both).
    const opOnB = new Client(b.url);
    opOnB.cookies = op.cookies;
    const board = await newBoard(b.url);
    const agent = await board.agent(unique('agent'));
    const onB = new Client(b.url, agent.defaults);
    for (let i = 0; i < 30; i++) expect((await onB.get('/api/status')).status).toBe(200);

    const listed = async (client: Client): Promise<Listed[]> => {
      const res = await client.get('/api/admin/utilization');
      expect(res.status, res.text).toBe(200);
      return res.body.nodes;
    };
    // Other suites' nodes may share this Redis: only these two are looked at.
    let fromA: Listed[] = [];
    await until(async () => {
      fromA = await listed(op);
      return (fromA.find((n) => n.nodeId === idB)?.figures.requestsPerMinute ?? 0) >= 30;
    }, 30_000);
    expect(fromA[0]).toMatchObject({ nodeId: idA, self: true, figures: { nodeId: idA, bus: 'ok' } });
    const bAsHeard = fromA.find((n) => n.nodeId === idB)!;
    expect(bAsHeard).toMatchObject({ self: false, figures: { nodeId: idB, bus: 'ok' } });
    expect(bAsHeard.figures.boardsActive).toBeGreaterThanOrEqual(1);

    let fromB: Listed[] = [];
    await until(async () => {
      fromB = await listed(opOnB);
      return fromB.some((n) => n.nodeId === idA);
    }, 30_000);
    expect(fromB[0]).toMatchObject({ nodeId: idB, self: true });
    expect(fromB[0]!.figures.requestsPerMinute).toBeGreaterThanOrEqual(30);
    expect(fromB.find((n) => n.nodeId === idA)).toMatchObject({ self: false });
    expect(new Set(fromB.map((n) => n.nodeId)).size).toBe(fromB.length);
  }, 60_000);
});
