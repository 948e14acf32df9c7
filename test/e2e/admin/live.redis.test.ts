// The operators' live view across two nodes on one store and one Redis: an operator's socket on
// one node sees, in the firehose and in a board it is no member of, what commits on the other.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newBoard } from '../../support/board.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { twoNodesOnRedis, type RedisNodes } from '../../support/redis-nodes.js';
import type { TestServer } from '../../support/server.js';
import { openSocket } from '../../support/socket.js';
import { cookieOf } from './live-flow.js';

const url = inject('redisUrl');

describe.skipIf(!url)('the operators’ live view on two nodes with the Redis bus', () => {
  const opEmail = operatorEmail();
  let nodes: RedisNodes | undefined;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    nodes = await twoNodesOnRedis(url!, {
      env: { OPERATOR_EMAILS: opEmail, ADDRESS_RATE_PER_MINUTE: '100000' },
      homes: true,
    });
    ({ a, b } = nodes);
  });
  afterAll(() => nodes?.stop());

  it('shows an operator on one node the firehose and a foreign board driven on the other, in order, audited once each', async () => {
    const op = await confirmedOperator(a, opEmail);
    const board = await newBoard(a.url);
    const agent = await board.agent('on-a');
    const socket = await openSocket(b.url, cookieOf(op.client));
    // Redis carries every test's boards: the firehose is narrowed to this one (before it is sampled).
    socket.send({ type: 'subscribe', topics: ['firehose'], boards: [board.projectId] });
    expect(await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).toMatchObject({
      type: 'subscribed',
      topics: ['firehose'],
    });
    socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
    expect(await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).toMatchObject({
      type: 'subscribed',
      boardId: board.projectId,
      role: 'operator',
    });

    for (let i = 0; i < 5; i++) expect((await agent.post('/api/items', { title: `on A ${i}` })).status).toBe(201);
    expect((await agent.post('/api/claim', {})).status).toBe(200);
    const log = ((await agent.get('/api/activity?limit=200')).body.events as { seq: number; type: string }[]).reverse();
    const firehose: { boardId: string; seq: number; event: { type: string } }[] = [];
    const direct: { seq: number; event: { type: string } }[] = [];
    while (firehose.length < log.length || direct.length < log.length) {
      const m = await socket.next((x) => x.type === 'firehose' || x.type === 'event');
      (m.type === 'firehose' ? firehose : direct).push(m);
    }
    expect(firehose.every((f) => f.boardId === board.projectId)).toBe(true);
    expect(firehose.map((f) => [f.seq, f.event.type])).toEqual(log.map((e) => [e.seq, e.type]));
    expect(direct.map((f) => [f.seq, f.event.type])).toEqual(log.map((e) => [e.seq, e.type]));

    const rows = await a.store.audit.find({ actor: `user:${op.accountId}` });
    expect(rows.map((r) => [r.action, r.target]).sort()).toEqual([
      ['admin.live.firehose', 'firehose'],
      ['admin.live.subscribe', `board:${board.projectId}`],
    ]);
    socket.ws.close();
  });
});
