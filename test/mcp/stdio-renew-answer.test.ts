// renew_lease over stdio says BOARD_UNREACHABLE when the renewal got no answer, as its keeper
// reports. It once decided so by comparing expiresAt before and after, so a renewal the board
// answered with the same expiresAt (a lease at its 24 h cap from the claim: "Renewals never pass
// 24 h from the grant") was refused as BOARD_UNREACHABLE (503), "The board did not answer", though
// the board answered and the lease is held.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tcpProxy } from '../support/tcp-proxy.js';
import { closeAgents, refusal, stdioAgent } from './agents.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ LEASE_MIN_TTL_SECONDS: '1' });
});
afterAll(async () => {
  await srv.stop();
});
afterEach(closeAgents);

it('renews a lease at its 24 h cap without calling the board unreachable', async () => {
  const board = await newBoard(srv.url);
  const member = await board.agent('long-haul');
  const agent = await stdioAgent(srv.url, member.defaults.authorization!.slice('Bearer '.length));
  await agent.ok('create_items', { items: [{ title: 'a day’s work' }] });
  const { lease } = await agent.ok('claim_work', { ttlSeconds: 86_400 });
  expect(lease.expiresAt).toBe(lease.hardExpiresAt); // already at the cap
  // The board renews it (as REST shows: 200, the lease held, expiresAt the cap).
  const renewed = await agent.call('renew_lease', {});
  expect(renewed.isError ? refusal(renewed) : null).toBeNull();
  expect((await member.get('/api/items/W-1')).body.lease).toMatchObject({ holder: member.principal });
}, 30_000);

it('says BOARD_UNREACHABLE when the renewal got no answer, and keeps the lease', async () => {
  const board = await newBoard(srv.url);
  const member = await board.agent('cut-off');
  const proxy = await tcpProxy(Number(new URL(srv.url).port));
  try {
    const agent = await stdioAgent(
      `http://127.0.0.1:${proxy.port}`,
      member.defaults.authorization!.slice('Bearer '.length),
    );
    await agent.ok('create_items', { items: [{ title: 'across a cut' }] });
    const { lease } = await agent.ok('claim_work', { ttlSeconds: 600 });
    proxy.cut();
    const cut = await agent.call('renew_lease', {});
    expect(refusal(cut)).toMatchObject({
      code: 'BOARD_UNREACHABLE',
      status: 503,
      message: expect.stringMatching(/^The renewal got no answer/),
    });
    proxy.restore();
    const renewed = await agent.call('renew_lease', {});
    expect(renewed.isError ? refusal(renewed) : null).toBeNull();
    expect((await member.get('/api/items/W-1')).body.lease).toMatchObject({ fencingToken: lease.fencingToken });
  } finally {
    await proxy.close();
  }
}, 30_000);
