// A resource token whose `claims` group lets it claim any item (REST answers the lease) but read
// none (visibility.ts: `claims` opens no part of the board to it): claim_work answers the lease it
// was granted, never a refusal, with the item left unread and why; the agent then holds a lease it
// can name, and finishes the work with it.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';
import { closeAgents, httpAgent, refusal } from './agents.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});
afterEach(closeAgents);

it('claim_work with a claims-scoped resource token either answers the lease or takes nothing', async () => {
  const board = await newBoard(srv.url);
  const planner = await board.agent('planner');
  await planner.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }, { title: 'three' }] });
  const issued = await board.owner.post('/api/accounts/tokens', {
    name: 'claimer',
    scope: 'resource',
    projectId: board.projectId,
    resources: ['claims'],
  });
  expect(issued.status).toBe(201);
  const secret = issued.body.secret as string;
  // REST: the token may claim, and may not read the item it holds.
  expectError(
    await new Client(srv.url, { authorization: `Bearer ${secret}` }).get('/api/items/W-1'),
    403,
    'PROJECT_SCOPE_DENIED',
  );
  const agent = await httpAgent(srv.url, secret);

  const first = await agent.call('claim_work', {});
  const counts = (await planner.get('/api/status')).body.counts as Record<string, number>;
  // The board granted the lease (W-1 is claimed): the tool must say so, with the lease id the agent needs.
  expect(counts.claimed).toBe(1);
  expect(
    first.isError ? refusal(first) : null,
    'claim_work reported a refusal while the board granted the lease',
  ).toBeNull();
  const { result } = first.structuredContent as {
    result: { lease: { workId: string; leaseId: string }; item: null; itemUnread: string };
  };
  expect(result).toMatchObject({ lease: { workId: 'W-1' }, item: null });
  expect(result.itemUnread).toMatch(/^PROJECT_SCOPE_DENIED: /);
  // The lease it was told of is the one it holds.
  const submitted = await agent.ok('submit_work', { leaseId: result.lease.leaseId, head: head(1) });
  expect(submitted).toMatchObject({ workId: 'W-1' });
  expect(((await planner.get('/api/status')).body.counts as Record<string, number>).claimed ?? 0).toBe(0);
});
