// The hour behind the Overview's charts, across nodes on Redis: each node's samples reach the other
// with its figures, and a node started a while later fills in what the others sampled before it was
// there (it asks on its own figures; they answer on their next).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RedisBus } from '../../../src/bus/redis.js';
import { Client, startTestServer, type TestServer } from '../../support/server.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { twoNodesOnRedis, type RedisNodes } from '../../support/redis-nodes.js';
import { unique } from '../../support/temp.js';
import { until } from '../../support/until.js';

const url = inject('redisUrl');

interface Columns {
  at: number[];
  from: number[];
  requests: number[];
}
interface NodeHistory {
  nodeId: string;
  self: boolean;
  samples: Columns;
  gaps: { from: number; to: number }[];
}

describe.skipIf(!url)('node history across two nodes on Redis', () => {
  let nodes: RedisNodes | undefined;
  let late: TestServer | undefined;
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
  afterAll(async () => {
    await late?.stop();
    await nodes?.stop();
  });

  it('answers a node’s samples on the others, those from before a late node started included', async () => {
    const onA = (await confirmedOperator(a, opEmail)).client;
    const onB = new Client(b.url);
    onB.cookies = onA.cookies;
    const history = async (client: Client): Promise<NodeHistory[]> => {
      const res = await client.get('/api/admin/utilization/history');
      expect(res.status, res.text).toBe(200);
      expect(res.body.everyMs).toBe(5000);
      return res.body.nodes;
    };
    // Two of a's samples, then a third node: it heard neither, and asks for them.
    let own: NodeHistory | undefined;
    await until(async () => {
      own = (await history(onA))[0];
      return own!.samples.at.length >= 2;
    }, 20_000);
    expect(own!.nodeId).toBe(idA);
    const first = own!.samples.at[0]!;
    late = await startTestServer(
      { OPERATOR_EMAILS: opEmail, NODE_ID: unique('node-c') },
      nodes!.store,
      new RedisBus(url!),
    );
    const onC = new Client(late.url);
    onC.cookies = onA.cookies;
    await until(async () => {
      const ofA = (await history(onC)).find((n) => n.nodeId === idA);
      return ofA?.samples.at[0] === first && ofA.gaps.length === 0;
    }, 30_000);

    let heard: NodeHistory | undefined;
    await until(async () => {
      heard = (await history(onB)).find((n) => n.nodeId === idA);
      return heard?.samples.at[0] === first && heard.samples.at.length >= 3;
    }, 30_000);
    expect(heard!.self).toBe(false);
    expect(heard!.gaps).toEqual([]);
    // The same samples on both nodes, where both hold them.
    const fromA = (await history(onA))[0]!;
    const held = heard!.samples.at.filter((at) => fromA.samples.at.includes(at));
    expect(held.length).toBeGreaterThanOrEqual(3);
    for (const at of held) {
      const [i, j] = [fromA.samples.at.indexOf(at), heard!.samples.at.indexOf(at)];
      expect([heard!.samples.from[j], heard!.samples.requests[j]]).toEqual([
        fromA.samples.from[i],
        fromA.samples.requests[i],
      ]);
    }
    // And b's own, on a.
    await until(async () => ((await history(onA)).find((n) => n.nodeId === idB)?.samples.at.length ?? 0) >= 1);
  }, 60_000);
});
