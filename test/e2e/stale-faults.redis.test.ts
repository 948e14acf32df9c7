// Issue 48's fault e2e: three nodes on one store, each reaching one Redis through a proxy of its
// own, 10 workers and 3 verifiers sending every request to a random node and retrying network
// errors, 5xx and 429 on another; Redis killed and restarted (the bus and the homes gone), then
// the board's home cut off from Redis and let back. From the agents' own records: no claim is
// answered 200 with a lease an earlier answer ended, and no two agents are told they hold one
// item at once; and the log's invariants hold. STALE_FAULT_RUNS runs it several times in a row.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import { RedisBus } from '../../src/bus/redis.js';
import { RedisHomes } from '../../src/cluster/redis-homes.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import type { EventRecord } from '../../store/ports/store.js';
import { head, newBoard } from '../support/board.js';
import { canRunRedis, ownRedis } from '../support/redis-server.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';
import { tcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { tempDir, unique } from '../support/temp.js';
import { pace, until } from '../support/until.js';

const haveRedis = inject('redisUrl') !== null && canRunRedis;
const RUNS = Number(process.env.STALE_FAULT_RUNS ?? 1);
const WORKERS = 10;
const VERIFIERS = 3;
/** The least a worker's step takes: ten workers then take at most 33 items a second. */
const STEP_MS = 300;

/* eslint-disable @typescript-eslint/no-explicit-any */
interface Answer {
  status: number;
  body: any;
  sentAt: number;
  answeredAt: number;
}
interface Grant {
  agent: string;
  workId: string;
  leaseId: string;
  token: number;
  sentAt: number;
  answeredAt: number;
}
/** An answer that ended a lease (released, submitted, verified), or told its holder it no longer holds it. */
interface Ending {
  agent: string;
  leaseId: string;
  sentAt: number;
  answeredAt: number;
}

describe.skipIf(!haveRedis)('three nodes through a bus outage and a partition', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it(
    'tells no agent it holds a lease that had ended, never two agents one item at once, and keeps the log whole',
    { timeout: 120_000 * RUNS },
    async () => {
      for (let run = 0; run < RUNS; run++) await oneRun();
    },
  );

  async function oneRun(): Promise<void> {
    const redis = await ownRedis();
    cleanups.push(async () => redis.kill());
    const redisPort = Number(new URL(redis.url).port);
    const proxies: TcpProxy[] = [];
    const nodes: TestServer[] = [];
    const dir = await tempDir();
    const store = await openEmbeddedStore(dir.path);
    cleanups.push(async () => {
      for (const node of nodes) await node.stop();
      for (const proxy of proxies) await proxy.close();
      await store.close();
      await dir.remove();
    });
    const nodeIds = [unique('node-a'), unique('node-b'), unique('node-c')];
    for (const nodeId of nodeIds) {
      const proxy = await tcpProxy(redisPort);
      proxies.push(proxy);
      const url = `redis://127.0.0.1:${proxy.port}`;
      nodes.push(
        await startTestServer(
          { NODE_ID: nodeId, BOARD_RATE_SCALE: '100' },
          store,
          new RedisBus(url),
          new RedisHomes(url),
        ),
      );
    }
    const busOf = async (node: TestServer) => (await new Client(node.url).get('/readyz')).body.bus;
    await until(async () => (await Promise.all(nodes.map(busOf))).every((b) => b === 'ok'));

    const board = await newBoard(nodes[0]!.url);
    const lead = await board.agent('lead', 'admin');
    // 600 items, every one verify-required, a third depending on another.
    for (const [count, from, depends] of [
      [400, 0, false],
      [200, 400, true],
    ] as const) {
      const items = Array.from({ length: count }, (_, i) => ({
        title: `task ${from + i + 1}`,
        verify: 'required',
        ...(depends && { dependsOn: [`W-${i + 1}`] }),
      }));
      expect((await lead.post('/api/items/batch', { items })).status).toBe(201);
    }
    const agents = await Promise.all([
      ...Array.from({ length: WORKERS }, (_, i) => board.agent(`w${i}`)),
      ...Array.from({ length: VERIFIERS }, (_, i) => board.agent(`v${i}`)),
    ]);

    /** A request to a random node; network errors, 5xx and 429 are tried again on another. */
    async function call(agent: Client, method: string, path: string, json?: unknown): Promise<Answer> {
      for (let tries = 0; ; tries++) {
        const node = nodes[Math.floor(Math.random() * nodes.length)]!;
        const sentAt = Date.now();
        try {
          const res = await new Client(node.url, agent.defaults).request(
            method,
            path,
            json === undefined ? {} : { json },
          );
          if (res.status < 500 && res.status !== 429)
            return { status: res.status, body: res.body, sentAt, answeredAt: Date.now() };
        } catch {
          // the node was unreachable: another one
        }
        if (tries > 400) throw new Error(`${method} ${path}: no node answered`);
        await pace(25);
      }
    }

    const grants: Grant[] = [];
    const endings: Ending[] = [];
    const started = Date.now();
    const stopAt = started + 20_000;
    let faultsOver = Infinity;
    const grantOf = (agent: Client & { principal: string }, a: Answer): Grant => ({
      agent: agent.principal,
      workId: a.body.workId,
      leaseId: a.body.leaseId,
      token: a.body.fencingToken,
      sentAt: a.sentAt,
      answeredAt: a.answeredAt,
    });
    const told = (agent: Client & { principal: string }, leaseId: string, a: Answer) =>
      endings.push({ agent: agent.principal, leaseId, sentAt: a.sentAt, answeredAt: a.answeredAt });

    async function worker(agent: Client & { principal: string }, n: number): Promise<void> {
      for (let step = 0, next = 0; Date.now() < stopAt; step++) {
        // At least STEP_MS a step: the 600 items then outlast the faults on any machine (a fast one
        // did them all within 13 s, before the faults were over, as fast as the nodes answered).
        await pace(Math.max(0, next - Date.now()));
        next = Date.now() + STEP_MS;
        const claimed = await call(agent, 'POST', '/api/claim', {});
        if (claimed.status !== 200) {
          if (claimed.body?.error?.code === 'NOTHING_READY') await pace(50);
          continue;
        }
        let grant = grantOf(agent, claimed);
        grants.push(grant);
        if (step % 4 === n % 4) {
          // Let go and take it straight back, by name, on whichever node: the answer must be a new lease.
          const released = await call(agent, 'POST', '/api/lease', { leaseId: grant.leaseId, action: 'release' });
          told(agent, grant.leaseId, released);
          const again = await call(agent, 'POST', '/api/claim', { workId: grant.workId });
          if (again.status !== 200) continue;
          grant = grantOf(agent, again);
          grants.push(grant);
        }
        if (step % 3 === n % 3) {
          // A repeated claim (a retry after a lost answer): its own lease back, unchanged.
          const repeated = await call(agent, 'POST', '/api/claim', { workId: grant.workId });
          if (repeated.status === 200) grants.push(grantOf(agent, repeated));
          else if (['LEASE_NOT_HELD', 'ITEM_NOT_READY'].includes(repeated.body?.error?.code))
            told(agent, grant.leaseId, repeated);
        }
        const submitted = await call(agent, 'POST', '/api/submit', {
          leaseId: grant.leaseId,
          head: head(Number(grant.workId.slice(2)) * 16 + (step % 16)),
        });
        told(agent, grant.leaseId, submitted);
      }
    }

    async function verifier(agent: Client & { principal: string }): Promise<void> {
      while (Date.now() < stopAt) {
        const claimed = await call(agent, 'POST', '/api/claim', { purpose: 'verify' });
        if (claimed.status !== 200) {
          await pace(50);
          continue;
        }
        const grant = grantOf(agent, claimed);
        grants.push(grant);
        const item = await call(agent, 'GET', `/api/items/${grant.workId}`);
        const verified = await call(agent, 'POST', '/api/verify', {
          workId: grant.workId,
          head: item.body.submission.head,
          verdict: 'pass',
        });
        told(agent, grant.leaseId, verified);
      }
    }

    async function faults(): Promise<void> {
      await pace(3000);
      redis.kill(); // the bus and the homes, for every node
      await pace(3000);
      await redis.start();
      await pace(3000);
      const keys = new Redis(redis.url);
      const holder = (await keys.get(`home:${board.projectId}`)) ?? `${nodeIds[0]} -`;
      keys.disconnect();
      const cut = proxies[nodeIds.indexOf(holder.split(' ')[0]!)] ?? proxies[0]!;
      cut.cut(); // the board's home alone loses Redis
      await pace(4000);
      cut.restore();
      faultsOver = Date.now();
    }

    await Promise.all([
      faults(),
      ...agents.slice(0, WORKERS).map((a, n) => worker(a, n)),
      ...agents.slice(WORKERS).map((a) => verifier(a)),
    ]);
    await until(async () => (await Promise.all(nodes.map(busOf))).every((b) => b === 'ok'));

    // From the agents' own records.
    const endOf = new Map<string, Ending[]>();
    for (const e of endings) (endOf.get(e.leaseId) ?? endOf.set(e.leaseId, []).get(e.leaseId)!).push(e);
    const stale = grants.filter((g) => (endOf.get(g.leaseId) ?? []).some((e) => e.answeredAt < g.sentAt));
    expect(stale).toEqual([]);
    const byItem = new Map<string, Grant[]>();
    for (const g of grants) (byItem.get(g.workId) ?? byItem.set(g.workId, []).get(g.workId)!).push(g);
    const overlaps: [Grant, Grant][] = [];
    for (const list of byItem.values()) {
      for (const g of list) {
        // The holder believes it holds from its answer until it sent what ended the lease (or heard it had).
        const heldUntil = Math.min(...(endOf.get(g.leaseId) ?? []).map((e) => e.sentAt), Infinity);
        for (const other of list)
          if (other.agent !== g.agent && other.answeredAt > g.answeredAt && other.answeredAt < heldUntil)
            overlaps.push([g, other]);
      }
    }
    expect(overlaps).toEqual([]);
    const tokens = new Map<string, string>();
    for (const g of grants)
      expect(tokens.get(`${g.workId}#${g.token}`) ?? g.agent).toBe(
        tokens.set(`${g.workId}#${g.token}`, g.agent).get(`${g.workId}#${g.token}`),
      );

    // The log: every seq once, tokens only rising per item, every acknowledged grant in it, no item done without an independent pass.
    expect((await new Client(nodes[0]!.url, lead.defaults).get('/api/activity?limit=1')).status).toBe(200); // the log holds every commit (a read copies it first)
    const log: EventRecord[] = await store.events.find({ boardId: board.projectId }, { sort: [['seq', 1]] });
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: log.length }, (_, i) => i + 1));
    const granted = new Map<string, number[]>();
    const holderOf = new Map<string, string>();
    for (const e of log.filter((x) => x.type === 'lease.granted')) {
      const lease = e.data.lease as { fencingToken: number; holder: string };
      (granted.get(e.workId!) ?? granted.set(e.workId!, []).get(e.workId!)!).push(lease.fencingToken);
      holderOf.set(`${e.workId}#${lease.fencingToken}`, lease.holder);
    }
    for (const list of granted.values()) expect(list.every((t, i) => i === 0 || t > list[i - 1]!)).toBe(true);
    for (const g of grants)
      expect([g.workId, g.token, holderOf.get(`${g.workId}#${g.token}`)]).toEqual([g.workId, g.token, g.agent]);
    const submitter = new Map<string, string>();
    for (const e of log) {
      if (e.type === 'item.submitted') submitter.set(e.workId!, e.data.by as string);
      if (e.type === 'item.state' && e.data.to === 'done') {
        const pass = log.findLast((x) => x.seq < e.seq && x.workId === e.workId && x.type === 'item.verified') as
          EventRecord | undefined;
        const verification = pass?.data.verification as { verdict: string; by: string } | undefined;
        expect([e.workId, verification?.verdict, verification?.by !== submitter.get(e.workId!)]).toEqual([
          e.workId,
          'pass',
          true,
        ]);
      }
    }
    if (process.env.STALE_FAULT_DEBUG)
      console.log(
        JSON.stringify({
          perSecond: grants.reduce<Record<number, number>>(
            (n, g) => (
              (n[Math.floor((g.answeredAt - started) / 1000)] =
                (n[Math.floor((g.answeredAt - started) / 1000)] ?? 0) + 1),
              n
            ),
            {},
          ),
          faultsOver: faultsOver - started,
          status: (await new Client(nodes[0]!.url, lead.defaults).get('/api/status')).body.counts,
        }),
      );
    // Work went on after the faults, and every node ends agreeing on every item.
    expect(grants.filter((g) => g.answeredAt > faultsOver).length).toBeGreaterThan(0);
    const views = await Promise.all(
      nodes.map(async (node) =>
        (await new Client(node.url, lead.defaults).get('/api/items?limit=500')).body.items.map((i: any) => [
          i.workId,
          i.state,
          i.version,
        ]),
      ),
    );
    expect(views[1]).toEqual(views[0]);
    expect(views[2]).toEqual(views[0]);
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  }
});
