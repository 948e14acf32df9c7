// Several nodes that add capacity (issue 22): three server processes on one Redis and one
// MongoDB-wire store, each board decided on its one home node, the others forwarding to it.
// Proved from the outside: the event log (one grant per lease, fencing increasing, no gap, every
// acknowledged write present) and each node's debug log (which node decided each command).
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runFleet } from '../../bench/fleet-sim.js';
import { deriveKeys } from '../../src/auth/keys.js';
import { COMMAND_DEADLINE_MS } from '../../src/cluster/board-router.js';
import { PEER_PATH } from '../../src/cluster/forwarder.js';
import { HOME_LEASE_MS } from '../../src/cluster/redis-homes.js';
import { channelKey, HELLO_HEADER, openFrame, sealFrame, sealHello } from '../../src/cluster/signed-envelope.js';
import WebSocket from 'ws';
import { newBoard } from '../support/board.js';
import { startMain, type NodeProcess } from '../support/process.js';
import { Client, type Res } from '../support/server.js';
import { canRunRedis, ownRedis, type OwnRedis } from '../support/redis-server.js';
import { unique } from '../support/temp.js';
import { pace, until } from '../support/until.js';
import { Watcher } from './nodes-flow.js';

const uri = inject('mongoUri');
const SECRET_KEY = 'homes-secret-key-of-at-least-32-characters';

interface Decided {
  node: number;
  time: number;
  forwarded: boolean;
}

/** The commands each node logged deciding for `boardId`, in time order. */
function decisions(nodes: readonly NodeProcess[], boardId: string): Decided[] {
  const all: Decided[] = [];
  nodes.forEach((n, node) => {
    for (const line of n.output().split('\n')) {
      if (!line.includes('"board command decided here"') || !line.includes(boardId)) continue;
      const entry = JSON.parse(line) as { time: number; boardId: string; forwarded: boolean };
      if (entry.boardId === boardId) all.push({ node, time: entry.time, forwarded: entry.forwarded });
    }
  });
  return all.sort((a, b) => a.time - b.time);
}

/** The runs of one node deciding in a row: one run per node means never two nodes at a time. */
const runsOf = (decided: Decided[]) =>
  decided.filter((d, i) => i === 0 || decided[i - 1]!.node !== d.node).map((d) => d.node);

const tookHomeAt = (node: NodeProcess, boardId: string): number[] =>
  node
    .output()
    .split('\n')
    .filter((l) => l.includes('"board home"') && l.includes(boardId) && l.includes('"taken"'))
    .map((l) => (JSON.parse(l) as { time: number }).time);

describe.skipIf(!uri || inject('redisUrl') === null || !canRunRedis)('three nodes, one home per board', () => {
  let redis: OwnRedis;
  let nodes: NodeProcess[] = [];
  let urls: string[] = [];
  const db = unique('homes');

  beforeAll(async () => {
    redis = await ownRedis();
    const env = {
      STORE: 'mongo',
      MONGODB_URI: uri!,
      MONGODB_DB: db,
      REDIS_URL: redis.url,
      LEASE_MIN_TTL_SECONDS: '1',
      LOG_LEVEL: 'debug',
      SECRET_KEY,
      // These are about homes, not budgets: the writers here go as fast as the nodes answer (a
      // handover no longer slows them), past the free plan's 120 writes a minute.
      BOARD_RATE_SCALE: '100',
    };
    nodes = await Promise.all([0, 1, 2].map((i) => startMain({ ...env, NODE_ID: `node-${i}` })));
    urls = nodes.map((n) => n.url);
  }, 120_000);

  afterAll(async () => {
    for (const n of nodes) n.child.kill('SIGTERM');
    await Promise.all(nodes.map((n) => n.exited));
    redis?.kill();
    const { MongoClient } = await import('mongodb');
    const client = await MongoClient.connect(uri!);
    await client.db(db).dropDatabase();
    await client.close();
  }, 60_000);

  it(
    '30 agents, each request to the next node in turn: every command decided on the one home, one grant per lease, fencing increasing, no gap',
    { timeout: 600_000 },
    async () => {
      let boardId = '';
      const report = await runFleet({
        baseUrls: urls,
        spread: 'request',
        agents: 30,
        items: 90,
        seed: 22,
        timeoutMs: 540_000,
        beforeWork: async (f) => void (boardId = f.projectId),
      });
      expect(report.violations).toEqual([]);
      expect(report.acknowledged).toBeGreaterThan(90);
      const decided = decisions(nodes, boardId);
      expect(runsOf(decided)).toHaveLength(1);
      // Two thirds of the requests entered elsewhere and were forwarded to the home.
      expect(decided.filter((d) => d.forwarded).length).toBeGreaterThan(decided.length / 3);
    },
  );

  it(
    'still grants each lease once when two nodes believe they are home at once (the home lease deleted under a live home, again and again)',
    { timeout: 600_000 },
    async () => {
      const client = new Redis(redis.url);
      let boardId = '';
      let deleting = true;
      let deleted = 0;
      const deleter = (async () => {
        while (deleting) {
          if (boardId) deleted += await client.del(`home:${boardId}`);
          await pace(50);
        }
      })();
      try {
        const report = await runFleet({
          baseUrls: urls,
          spread: 'request',
          agents: 30,
          // Enough to outlast a dozen deletions on a fast machine (60 items were done after five).
          items: 200,
          seed: 2222,
          timeoutMs: 540_000,
          beforeWork: async (f) => void (boardId = f.projectId),
        });
        expect(report.violations).toEqual([]);
      } finally {
        deleting = false;
        await deleter;
        client.disconnect();
      }
      expect(deleted).toBeGreaterThan(5);
      // Homes changed under the fleet many times, and nodes decided interleaved (two homes at once).
      expect(runsOf(decisions(nodes, boardId)).length).toBeGreaterThan(nodes.length);
    },
  );

  it(
    'refuses a peer channel with a bad, misaddressed, stale or replayed hello as an unknown path, closes one on a frame that does not open (altered, replayed, renumbered, from another channel), and decides nothing of them',
    { timeout: 60_000 },
    async () => {
      const board = await newBoard(urls[0]!);
      expect((await board.owner.post('/api/items', { title: 'first' })).status).toBe(201); // node 0 is now the board's home
      const key = deriveKeys(SECRET_KEY).forward;
      const command = {
        kind: 'create',
        items: [
          {
            title: 'forged',
            description: '',
            type: 'task',
            priority: 2,
            labels: [],
            criteria: [],
            spec: [],
            doctrine: [],
            dependsOn: [],
            parentId: null,
            verify: 'none',
            maxAttempts: 3,
          },
        ],
        actor: 'agent:forger',
      };
      const unknownPath = await fetch(`${urls[0]}/internal/no-such-thing`);
      const unknown = {
        status: unknownPath.status,
        code: ((await unknownPath.json()) as { error: { code: string } }).error.code,
      };
      const items = async () =>
        ((await board.owner.get(`/api/status?projectId=${board.projectId}`)).body as { counts: Record<string, number> })
          .counts;
      const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
      const before = await items();

      const hello = (overrides: Record<string, unknown> = {}, withKey = key) =>
        sealHello(withKey, { from: 'node-1', to: 'node-0', at: Date.now(), ...overrides });
      const refusals = [
        ['no hello', undefined],
        ['signed with another key', hello({}, createHash('sha256').update('not the key').digest()).header],
        [
          'altered after sealing',
          (() => {
            const h = hello().header;
            const [body, sig] = h.split('.');
            const json = JSON.parse(Buffer.from(body!, 'base64url').toString()) as Record<string, unknown>;
            return `${Buffer.from(JSON.stringify({ ...json, from: 'node-2' })).toString('base64url')}.${sig}`;
          })(),
        ],
        ['addressed to another node', hello({ to: 'node-2' }).header],
        ['stamped two minutes ago', hello({ at: Date.now() - 120_000 }).header],
      ] as const;
      for (const [why, header] of refusals)
        expect({ why, ...(await refusedUpgrade(urls[0]!, header)) }).toEqual({ why, ...unknown });
      // A hello that opened once does not open again.
      const used = hello();
      const first = await openChannel(urls[0]!, used.header);
      first.close();
      expect({ why: 'replayed hello', ...(await refusedUpgrade(urls[0]!, used.header)) }).toEqual({
        why: 'replayed hello',
        ...unknown,
      });

      // On an open channel: a frame that does not open closes it, with nothing of it decided.
      const frameOf = (nonce: string, n: number, id: number, withKey = key) =>
        sealFrame(channelKey(withKey, nonce), 'to-home', n, JSON.stringify([[id, board.projectId, command]]));
      const badFrames = [
        [
          'signed with another key',
          (nonce: string) => frameOf(nonce, 1, 1, createHash('sha256').update('not the key').digest()),
        ],
        ['numbered out of turn', (nonce: string) => frameOf(nonce, 2, 1)],
        ['altered after sealing', (nonce: string) => frameOf(nonce, 1, 1).replace('forged', 'forgeD')],
        ['from another channel', () => frameOf(hello().nonce, 1, 1)],
      ] as const;
      for (const [why, frame] of badFrames) {
        const h = hello();
        const channel = await openChannel(urls[0]!, h.header);
        channel.send(frame(h.nonce));
        expect({ why, closed: await channel.closed }).toEqual({ why, closed: true });
      }
      expect(await items()).toEqual(before);

      // A good frame is decided once and answered in a frame that opens with the channel's key; the
      // same frame sent again closes the channel and decides nothing.
      const h = hello();
      const channel = await openChannel(urls[0]!, h.header);
      const good = frameOf(h.nonce, 1, 7);
      channel.send(good);
      const answer = openFrame(channelKey(key, h.nonce), 'to-entry', 1, await channel.next());
      expect((JSON.parse(answer!) as [number, { reply: { title: string }[] }][])[0]).toMatchObject([
        7,
        { reply: [{ title: 'forged' }] },
      ]);
      channel.send(good);
      expect(await channel.closed).toBe(true);
      expect(total(await items())).toBe(total(before) + 1);
    },
  );

  it(
    'answers 503 BOARD_BUSY with Retry-After, within the command deadline, when the home stops answering (a frozen process); once it answers again the board goes on and nothing is decided twice',
    { timeout: 90_000 },
    async () => {
      const board = await newBoard(urls[0]!);
      const agent = await board.agent('frozen-home');
      expect((await agent.post('/api/items', { title: 'before' })).status).toBe(201); // node 0 is now the board's home
      const elsewhere = new Client(urls[1]!, agent.defaults);
      nodes[0]!.child.kill('SIGSTOP'); // the home keeps its connections open and answers nothing
      let busy: Res;
      const sentAt = Date.now();
      try {
        busy = await elsewhere.post('/api/items', { title: 'while frozen' });
      } finally {
        nodes[0]!.child.kill('SIGCONT');
      }
      const waited = Date.now() - sentAt;
      expect(busy.status, busy.text).toBe(503);
      expect(busy.body.error.code).toBe('BOARD_BUSY');
      expect(busy.headers.get('retry-after')).toBe('1');
      expect(waited).toBeLessThan(COMMAND_DEADLINE_MS + 3000);
      // As an agent does after Retry-After: the board answers again, from either node.
      await until(async () => (await elsewhere.post('/api/items', { title: 'after' })).status === 201, 30_000);
      const titles = (
        (await board.owner.get(`/api/items?projectId=${board.projectId}&limit=100`)).body.items as { title: string }[]
      ).map((i) => i.title);
      expect(titles.filter((t) => t === 'before')).toHaveLength(1);
      expect(titles.filter((t) => t === 'after').length).toBeGreaterThanOrEqual(1);
      // The refused command's outcome was unknown to the caller: the resumed home may have decided it, but once at most.
      expect(titles.filter((t) => t === 'while frozen').length).toBeLessThanOrEqual(1);
    },
  );

  it(
    'moves the boards of a home killed mid-fleet within the lease TTL plus a second; nothing acknowledged is lost, no lease granted twice, and sockets on the other nodes get every event once, in order',
    { timeout: 600_000 },
    async () => {
      const live = [...urls];
      const watchers: Watcher[] = [];
      let boardId = '';
      let killedAt = 0;
      const fleet = runFleet({
        baseUrls: live,
        spread: 'request',
        agents: 30,
        items: 120,
        seed: 2_2022,
        timeoutMs: 540_000,
        async beforeWork({ projectId, owner, agents }) {
          boardId = projectId;
          // Watchers on the two nodes that survive: the owner and a few agents, every event.
          for (const [i, headers] of [owner, ...agents.slice(0, 3).map((a) => a.auth)].entries()) {
            const w = new Watcher(`watcher ${i} on node ${1 + (i % 2)}`, headers, projectId);
            await w.connect(urls[1 + (i % 2)]!);
            watchers.push(w);
          }
        },
      });
      // The fleet's first command (its batch) enters on node 0, which becomes the home. Once work is
      // well under way, node 0 leaves the balancer's list and is SIGKILLed.
      const kill = async () => {
        await until(() => watchers.length === 4 && watchers[0]!.last >= 200, 300_000);
        expect(decisions(nodes, boardId).every((d) => d.node === 0)).toBe(true);
        live.splice(0, 1);
        killedAt = Date.now();
        nodes[0]!.child.kill('SIGKILL');
        await nodes[0]!.exited;
      };
      const [report] = await Promise.all([fleet, kill()]);
      expect(report.violations).toEqual([]);
      const taken = [1, 2].flatMap((i) => tookHomeAt(nodes[i]!, boardId)).filter((t) => t >= killedAt);
      expect(taken.length).toBeGreaterThan(0);
      expect(Math.min(...taken) - killedAt).toBeLessThanOrEqual(HOME_LEASE_MS + 1000);
      // Before the kill node 0 decided everything; after it, one surviving node did.
      expect(runsOf(decisions(nodes, boardId))).toEqual([0, expect.any(Number)]);
      await until(() => watchers.every((w) => w.last >= report.events), 60_000).catch(() => undefined);
      for (const w of watchers) w.close();
      expect(watchers.flatMap((w) => w.differences(report.log))).toEqual([]);
    },
  );

  // After the kill: nodes 1 and 2 are left.
  it(
    'hands a draining home’s board on to the next home: every request through another node succeeds, each decided once, on one node at a time',
    { timeout: 120_000 },
    async () => {
      const board = await newBoard(urls[1]!);
      const agent = await board.agent('through-a-drain');
      expect((await agent.post('/api/items', { title: 'drain-home' })).status).toBe(201); // node 1 is now the board's home
      const entry = new Client(urls[2]!, agent.defaults);
      const statuses: number[] = [];
      let stop = false;
      // Three writers on node 2, each a command at a time, through the drain and after it.
      const writers = [0, 1, 2].map(async (w) => {
        for (let i = 0; !stop; i++) {
          const res = await entry.post('/api/items', { title: `drain ${w}-${i}` });
          statuses.push(res.status);
        }
      });
      await until(() => statuses.length >= 30, 30_000);
      nodes[1]!.child.kill('SIGTERM');
      await nodes[1]!.exited;
      const atExit = statuses.length;
      await until(() => statuses.length >= atExit + 30, 30_000);
      stop = true;
      await Promise.all(writers);
      expect(statuses.filter((s) => s !== 201)).toEqual([]);
      const listed = await entry.get(`/api/items?projectId=${board.projectId}&limit=500`);
      expect(listed.status, listed.text).toBe(200);
      const titles = (listed.body.items as { title: string }[])
        .map((i) => i.title)
        .filter((t) => t.startsWith('drain '));
      expect(titles).toHaveLength(statuses.length);
      expect(new Set(titles).size).toBe(titles.length);
      // Node 1 decided until it drained, then node 2, never the two in turn.
      expect(runsOf(decisions(nodes, board.projectId))).toEqual([1, 2]);
    },
  );
});

const peerUrl = (url: string) => `${url.replace(/^http/, 'ws')}${PEER_PATH}`;

/** The status and error code a peer upgrade with this hello is refused with. */
function refusedUpgrade(url: string, header: string | undefined): Promise<{ status: number; code: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(peerUrl(url), { headers: header === undefined ? {} : { [HELLO_HEADER]: header } });
    ws.on('open', () => reject(new Error('the channel opened')));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, code: (JSON.parse(body) as { error: { code: string } }).error.code }),
      );
    });
    ws.on('error', () => undefined);
  });
}

/** An open peer channel: frames sent raw, the next frame received, and whether the home closed it (within 10 s). */
async function openChannel(
  url: string,
  header: string,
): Promise<{ send(frame: string): void; next(): Promise<string>; closed: Promise<boolean>; close(): void }> {
  const ws = new WebSocket(peerUrl(url), { headers: { [HELLO_HEADER]: header } });
  const received: string[] = [];
  let wake: (() => void) | null = null;
  ws.on('message', (data) => {
    received.push(data.toString());
    wake?.();
  });
  const closed = new Promise<boolean>((resolve) => {
    ws.on('close', () => resolve(true));
    setTimeout(() => resolve(false), 10_000).unref();
  });
  await new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('error', reject);
  });
  return {
    send: (frame) => ws.send(frame),
    async next() {
      while (received.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      return received.shift()!;
    },
    closed,
    close: () => ws.close(),
  };
}
