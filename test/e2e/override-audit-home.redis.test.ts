// An override sent to a node that is not its board's home, whose commit lands on the home but
// whose answer is lost: the home audits it from the committed event, with no retry by anyone.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { loseAnswerOnce } from '../support/fail-once.js';
import { twoNodesOnRedis, type RedisNodes } from '../support/redis-nodes.js';
import { Client } from '../support/server.js';
import { until } from '../support/until.js';

const url = inject('redisUrl');

describe.skipIf(!url)('an override forwarded to its board’s home, its answer lost', () => {
  let nodes: RedisNodes;
  beforeAll(async () => {
    nodes = await twoNodesOnRedis(url!, { homes: true, env: { BOARD_RATE_SCALE: '100' } });
  }, 60_000);
  afterAll(async () => {
    await nodes?.stop();
  });

  it('is audited once, by the home', async () => {
    const board = await newBoard(nodes.a.url);
    const builder = await board.agent('builder');
    await builder.post('/api/items', { title: 'Gate', verify: 'required' });
    const g = await builder.post('/api/claim', { workId: 'W-1' });
    await builder.post('/api/submit', { leaseId: g.body.leaseId, head: head(1) });
    const lead = await board.owner.post('/api/accounts/tokens', {
      name: 'lead',
      scope: 'workspace',
      projectId: board.projectId,
      role: 'admin',
    });
    const onB = new Client(nodes.b.url, { authorization: `Bearer ${lead.body.secret}` });
    loseAnswerOnce(nodes.store.boards, 'commit');
    const first = await onB.post('/api/items/W-1/override', { reason: 'hotfix' });
    expect(first.status, first.text).toBeGreaterThanOrEqual(500);
    expect((await builder.get('/api/items/W-1')).body.state).toBe('done');
    const rows = () => nodes.store.audit.find({ projectId: board.projectId, action: 'item.override' });
    await until(async () => (await rows()).length > 0, { what: 'the override’s audit row', timeout: 5000 });
    expect(await rows()).toHaveLength(1);
  });
});
