// A resource token whose `claims` group lets it claim any item (REST answers the lease) and read
// the item it holds while it holds it (visibility.ts: an agent reads what it works on), and nothing
// else of the board: claim_work answers the lease it was granted with the item, the item reads over
// REST while held and is refused again once the lease ends; the agent finishes the work with the
// lease it can name.
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
  // REST: the token may claim, and may not read an item it does not hold.
  const rest = new Client(srv.url, { authorization: `Bearer ${secret}` });
  expectError(await rest.get('/api/items/W-1'), 403, 'PROJECT_SCOPE_DENIED');
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
    result: { lease: { workId: string; leaseId: string }; item: unknown; itemUnread?: string };
  };
  // The item it holds is its to read: claim_work answers it, and so does REST while the lease stands.
  expect(result, 'claim_work left the held item unread').toMatchObject({
    lease: { workId: 'W-1' },
    item: { workId: 'W-1', title: 'one' },
  });
  expect(result.itemUnread).toBeUndefined();
  const held = await rest.get('/api/items/W-1');
  expect(held.status, held.text).toBe(200);
  expect(held.body).toMatchObject({ workId: 'W-1', title: 'one' });
  expectError(await rest.get('/api/items/W-2'), 403, 'PROJECT_SCOPE_DENIED'); // not held: none of its business
  // The lease it was told of is the one it holds.
  const submitted = await agent.ok('submit_work', { leaseId: result.lease.leaseId, head: head(1) });
  expect(submitted).toMatchObject({ workId: 'W-1' });
  expect(((await planner.get('/api/status')).body.counts as Record<string, number>).claimed ?? 0).toBe(0);
  // Its lease ended with the submission: the item is no longer its to read.
  expectError(await rest.get('/api/items/W-1'), 403, 'PROJECT_SCOPE_DENIED');
});
