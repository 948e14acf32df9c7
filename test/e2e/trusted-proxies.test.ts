// Per-address budgets behind proxies, over real HTTP: login spends the per-address budget
// (ADDRESS_RATE_PER_MINUTE, here 2), so which address a request was counted against shows in
// which request is the first refused (429 RATE_LIMITED).
import { afterEach, describe, expect, it } from 'vitest';
import { Client, startTestServer, type TestServer } from '../support/server.js';
import { head, newBoard } from '../support/board.js';
import { unique } from '../support/temp.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

async function node(env: Record<string, string>, base?: (port: number) => string): Promise<Client> {
  const s = await startTestServer({ ADDRESS_RATE_PER_MINUTE: '2', ...env });
  servers.push(s);
  s.holdBudgets();
  return new Client(base ? base(s.server.port) : s.url);
}

/** One login (wrong password: it spends the budget all the same) with these headers; its status. */
async function login(client: Client, headers: Record<string, string> = {}): Promise<number> {
  return (
    await client.post(
      '/api/auth/login',
      { email: `${unique('nobody')}@example.com`, password: 'not the password' },
      headers,
    )
  ).status;
}

describe('trusted proxies over HTTP', () => {
  it('from a peer not trusted, spoofed X-Forwarded-For and Forwarded are ignored: every request counts against the peer', async () => {
    const client = await node({ TRUSTED_PROXIES: '10.0.0.0/8' });
    expect(await login(client, { 'x-forwarded-for': '203.0.113.1' })).toBe(401);
    expect(await login(client, { 'x-forwarded-for': '203.0.113.2', forwarded: 'for=203.0.113.3' })).toBe(401);
    expect(await login(client, { 'x-forwarded-for': '203.0.113.4' })).toBe(429);
  });

  it('without TRUSTED_PROXIES the headers are ignored too', async () => {
    const client = await node({});
    expect(await login(client, { 'x-forwarded-for': '203.0.113.1' })).toBe(401);
    expect(await login(client, { 'x-forwarded-for': '203.0.113.2' })).toBe(401);
    expect(await login(client, { 'x-forwarded-for': '203.0.113.3' })).toBe(429);
  });

  it('behind a trusted proxy each client has its own budget, and one abuser does not lock out the rest', async () => {
    const client = await node({ TRUSTED_PROXIES: '127.0.0.1' });
    const abuser = { 'x-forwarded-for': '203.0.113.66' };
    expect(await login(client, abuser)).toBe(401);
    expect(await login(client, abuser)).toBe(401);
    expect(await login(client, abuser)).toBe(429);
    expect(await login(client, { 'x-forwarded-for': '203.0.113.7' })).toBe(401);
    // The proxy's own requests (no header) draw on its own budget, not on the abuser's.
    expect(await login(client)).toBe(401);
  });

  it('through a chain of proxies the right-most untrusted hop is the client, whatever it prepended', async () => {
    const client = await node({ TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' });
    expect(await login(client, { 'x-forwarded-for': '203.0.113.7, 10.0.0.5' })).toBe(401);
    // Same client through the same chain, with a different address written in front by the client.
    expect(await login(client, { 'x-forwarded-for': '198.51.100.1, 203.0.113.7, 10.0.0.5' })).toBe(401);
    expect(await login(client, { 'x-forwarded-for': '198.51.100.2, 203.0.113.7, 10.0.0.9, 10.0.0.5' })).toBe(429);
    // The hop in front of the chain is someone else.
    expect(await login(client, { 'x-forwarded-for': '203.0.113.8, 10.0.0.5' })).toBe(401);
  });

  it('over IPv6: a trusted ::1 proxy, clients counted by their /64, Forwarded with a quoted [address]:port', async () => {
    const client = await node(
      { HOST: '::1', TRUSTED_PROXIES: '::1', FORWARDED_HEADER: 'forwarded' },
      (port) => `http://[::1]:${port}`,
    );
    expect(await login(client, { forwarded: 'for="[2001:db8:1:2::5]:4711";proto=https' })).toBe(401);
    // Another address of the same /64 is the same host (src/ratelimit/address-key.ts).
    expect(await login(client, { forwarded: 'for="[2001:db8:1:2::6]"' })).toBe(401);
    expect(await login(client, { forwarded: 'for="[2001:db8:1:2:ffff::1]"' })).toBe(429);
    expect(await login(client, { forwarded: 'for="[2001:db8:9:9::1]"' })).toBe(401);
    // With FORWARDED_HEADER=forwarded, an X-Forwarded-For the client sent through the proxy counts for nothing.
    expect(await login(client, { forwarded: 'for="[2001:db8:1:2::5]"', 'x-forwarded-for': '2001:db8:7:7::7' })).toBe(
      429,
    );
  });

  it('writes the client address into audit rows: the forwarded client behind a trusted proxy, the peer itself otherwise', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ TRUSTED_PROXIES: '127.0.0.1' }, '203.0.113.9'],
      [{ TRUSTED_PROXIES: '10.0.0.0/8' }, '127.0.0.1'],
    ];
    for (const [env, address] of cases) {
      const s = await startTestServer(env);
      servers.push(s);
      const board = await newBoard(s.url);
      const agent = await board.agent('a');
      await agent.post('/api/items', { title: 'gated', verify: 'required' });
      const lease = (await agent.post('/api/claim', { workId: 'W-1' })).body;
      await agent.post('/api/submit', { leaseId: lease.leaseId, head: head(1) });
      const overridden = await board.owner.post(
        `/api/items/W-1/override?projectId=${board.projectId}`,
        { reason: 'hotfix' },
        { 'x-forwarded-for': '203.0.113.9', 'x-request-id': 'req-override-1' },
      );
      expect(overridden.status).toBe(200);
      const row = await s.store.audit.findOne({ projectId: board.projectId, action: 'item.override' });
      expect(row!.data).toEqual({ workId: 'W-1', reason: 'hotfix', requestId: 'req-override-1', address });
    }
  });
});
