// Metrics for operators: GET /metrics on METRICS_PORT (never the public port), behind
// METRICS_TOKEN, in the Prometheus text format, parsed here as a scraper would. A real node serves
// requests, commits, a lease that expires, a socket and a rate-limit refusal, and each shows.
import { afterEach, describe, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { scrape } from '../support/metrics.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';
import { openSocket } from '../support/socket.js';
import { unique } from '../support/temp.js';

const TOKEN = 'metrics-token-for-the-test-0123456789';
const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

async function metricsNode(env: Record<string, string> = {}): Promise<TestServer & { metricsPort: number }> {
  const s = await startTestServer({
    METRICS_PORT: '0',
    METRICS_TOKEN: TOKEN,
    LEASE_MIN_TTL_SECONDS: '1',
    ADDRESS_RATE_PER_MINUTE: '3',
    ...env,
  });
  servers.push(s);
  return { ...s, metricsPort: s.server.metricsPort! };
}

describe('GET /metrics', () => {
  it('answers only on its own port, and only with the token (401 otherwise, compared in constant time)', async () => {
    const node = await metricsNode();
    expect(node.metricsPort).toBeGreaterThan(0);
    expect(node.metricsPort).not.toBe(node.server.port);
    expect((await fetch(`${node.url}/metrics`)).status).toBe(404); // not on the public port
    const at = `http://127.0.0.1:${node.metricsPort}/metrics`;
    expect((await fetch(at)).status).toBe(401);
    expect((await fetch(at, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    expect((await fetch(at, { headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}` } })).status).toBe(401);
    expect((await fetch(at, { headers: { authorization: 'Bearer ' } })).status).toBe(401);
    expect((await fetch(at, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect(
      (await fetch(`http://127.0.0.1:${node.metricsPort}/other`, { headers: { authorization: `Bearer ${TOKEN}` } }))
        .status,
    ).toBe(404);
    expect((await fetch(at, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
  });

  it('is off without METRICS_PORT', async () => {
    const s = await startTestServer();
    servers.push(s);
    expect(s.server.metricsPort).toBeNull();
  });

  it('covers requests by route and status with latencies, actors, commits, lease expiries, sockets, bus, store, mail and rate-limit refusals', async () => {
    const node = await metricsNode();
    const before = await scrape(node.metricsPort, TOKEN);
    expect(before.value('board_actors_active')).toBe(0);

    for (let i = 0; i < 3; i++) expect((await fetch(`${node.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${node.url}/no/such/page/api`)).status).toBe(404);
    const board = await newBoard(node.url);
    const agent = await board.agent('worker');
    for (let i = 0; i < 3; i++) expect((await agent.post('/api/items', { title: `item ${i}` })).status).toBe(201);
    const claim = await agent.post('/api/claim', { ttlSeconds: 1 });
    expect(claim.status, claim.text).toBe(200);
    // The lease's expiry timer is armed on this node (once the claim's events are in the log).
    await expect
      .poll(async () => (await scrape(node.metricsPort, TOKEN)).value('board_lease_timers'), {
        timeout: 5_000,
        interval: 50,
      })
      .toBe(1);
    const socket = await openSocket(node.url, { authorization: agent.defaults.authorization! });
    // The per-address budget (3 a minute) runs out in a fresh window: the fourth login is refused.
    node.holdBudgets();
    const stranger = new Client(node.url);
    const logins: number[] = [];
    for (let i = 0; i < 4; i++)
      logins.push(
        (
          await stranger.post('/api/auth/login', {
            email: `${unique('nobody')}@example.com`,
            password: 'wrong password here',
          })
        ).status,
      );
    expect(logins).toEqual([401, 401, 401, 429]);
    const refusedLogins = 1;

    // The lease runs out by itself: the node's timer commits its expiry.
    await expect
      .poll(async () => (await scrape(node.metricsPort, TOKEN)).value('board_lease_expiries_total'), {
        timeout: 15_000,
        interval: 200,
      })
      .toBe(1);
    const m = await scrape(node.metricsPort, TOKEN);

    expect(m.family('board_http_requests_total').type).toBe('COUNTER');
    expect(m.value('board_http_requests_total', { route: 'GET /healthz', status: '200' })).toBe(3);
    expect(m.value('board_http_requests_total', { route: 'POST /api/items', status: '201' })).toBe(3);
    expect(m.value('board_http_requests_total', { route: 'POST /api/claim', status: '200' })).toBe(1);
    expect(m.value('board_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(m.value('board_http_requests_total', { route: 'POST /api/auth/login', status: '401' })).toBe(
      logins.length - refusedLogins,
    );
    expect(m.value('board_http_requests_total', { route: 'POST /api/auth/login', status: '429' })).toBe(refusedLogins);
    expect(m.value('board_rate_limit_refusals_total', { route: 'POST /api/auth/login' })).toBe(refusedLogins);

    expect(m.family('board_http_request_duration_seconds').type).toBe('HISTOGRAM');
    const items = m.series('board_http_request_duration_seconds', { route: 'POST /api/items' });
    expect(items.count).toBe(3);
    expect(items.buckets['+Inf']).toBe(3);
    expect(items.sum).toBeGreaterThan(0);
    expect(m.series('board_http_request_duration_seconds', { route: 'GET /healthz' }).count).toBe(3);

    expect(m.value('board_actors_active')).toBe(1);
    expect(m.value('board_lease_timers')).toBe(0); // the only lease expired
    expect(m.value('board_mailbox_waiting')).toBe(0); // nothing asked meanwhile
    // Three creations, the claim and the expiry: at least five commits, each with its events.
    expect(m.value('board_commits_total')).toBeGreaterThanOrEqual(5);
    const perCommit = m.family('board_commit_events').metrics[0]!;
    expect(Number(perCommit.count)).toBe(m.value('board_commits_total'));
    expect(m.value('board_lease_expiries_total')).toBe(1);
    expect(m.value('board_sockets_open')).toBe(1);
    expect(m.value('board_bus_state', { state: 'local' })).toBe(1);
    expect(m.value('board_bus_state', { state: 'degraded' })).toBe(0);
    expect(m.value('board_store_up')).toBe(1);
    for (const name of [
      'board_mail_queued',
      'board_mail_sent_total',
      'board_mail_retries_total',
      'board_mail_failed_total',
      'board_http_in_flight',
      'board_lease_warnings_total',
    ])
      expect(m.family(name).metrics).toHaveLength(1);
    expect(m.value('process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(m.families.some((f) => f.name === 'nodejs_eventloop_lag_seconds')).toBe(true);

    socket.ws.close();
    await expect.poll(async () => (await scrape(node.metricsPort, TOKEN)).value('board_sockets_open')).toBe(0);
  });
});
