// The deployment the README describes, proved end to end: two server processes (src/main.ts) on
// one Redis and one MongoDB-wire store. 50 agents split across them run the fleet simulation
// while each agent, and the owner on each node, holds a socket on the board; Redis is SIGKILLed in
// the middle of the run and started again, and some agents reconnect meanwhile to the other node
// with `since`. Every socket ends with every event of the log exactly once, in seq order. A lease
// holder's socket on the other node hears its lease expiring and expired. Then a claim race on
// one item from both nodes at once has exactly one winner, 200 times over, and a rewind on one node
// racing 20 agents on both leaves no lease from before it alive and the log gapless.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFleet, type LoggedEvent } from '../../bench/fleet-sim.js';
import { newBoard } from '../support/board.js';
import { startMain } from '../support/process.js';
import { ownRedis, type OwnRedis } from '../support/redis-server.js';
import { quietFor, until } from '../support/until.js';
import { Client } from '../support/server.js';
import { openSocket } from '../support/socket.js';
import { unique } from '../support/temp.js';
import { makePro, webhookOnlyBilling } from '../support/billing.js';
import { openMongoStore } from '../../store/mongo/index.js';
import { HOME_LEASE_MS } from '../../src/cluster/redis-homes.js';
import { rewindRace } from './rewind-race.js';

const WEBHOOK_SECRET = 'whsec_nodes';

interface Node {
  url: string;
  /** What the node logged about its bus and budgets (the lines of the outage), for a failure's message. */
  redisLines(): string;
  stop(): Promise<void>;
}

async function startNode(env: Record<string, string>): Promise<Node> {
  const node = await startMain(env);
  return {
    url: node.url,
    redisLines: () =>
      node
        .output()
        .split('\n')
        .filter((line) => /redis|"level":(40|50|60)/.test(line))
        .slice(-20)
        .join('\n'),
    async stop() {
      node.child.kill('SIGTERM');
      await node.exited;
    },
  };
}

/** A socket that records the board events it is sent, resumable on another node with `since`. */
export class Watcher {
  readonly seqs: number[] = [];
  readonly types = new Map<number, string>();
  readonly problems: string[] = [];
  private ws: WebSocket | null = null;

  constructor(
    readonly name: string,
    private readonly headers: Record<string, string>,
    private readonly boardId: string,
  ) {}

  get last(): number {
    return this.seqs.at(-1) ?? 0;
  }

  /**
   * Connects to `url` and subscribes to everything, from `since` when given; resolves once subscribed.
   * A socket dropped before it is subscribed is opened again, as every client of ours does: uWS
   * 20.30 at times closes a socket it has just upgraded after an awaited authentication (no close
   * frame, 1006; docs/internals.md, "A socket dropped just after it opens"), and nothing was delivered on it yet.
   */
  async connect(url: string, since?: number): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const dropped = await this.open(url, since);
      if (dropped === null) return;
      if (attempt === 3)
        throw new Error(`${this.name}: dropped before it was subscribed, ${attempt} times: ${dropped}`);
    }
  }

  /** One connection: null once subscribed, or how it closed before that. */
  private open(url: string, since?: number): Promise<string | null> {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/api/ws`, { headers: this.headers });
    this.ws = ws;
    let subscribed = false;
    return new Promise<string | null>((resolve, reject) => {
      ws.once('error', reject);
      ws.on('message', (data) => {
        if (this.ws !== ws) return; // hung up: what was still on its way is not seen
        const m = JSON.parse(data.toString());
        if (m.type === 'subscribed') {
          subscribed = true;
          resolve(null);
        } else if (m.type === 'event' && m.seq !== null) {
          this.seqs.push(m.seq);
          this.types.set(m.seq, m.event.type);
        } else if (m.type === 'error' || m.type === 'resync') this.problems.push(JSON.stringify(m));
      });
      ws.on('close', (code, reason) => {
        if (this.ws !== ws) return;
        if (subscribed) this.problems.push(`closed ${code} ${reason.toString()}`);
        else {
          this.ws = null;
          resolve(`closed ${code} ${reason.toString()}`);
        }
      });
      ws.once('open', () =>
        ws.send(
          JSON.stringify({
            type: 'subscribe',
            boardId: this.boardId,
            topics: ['activity'],
            ...(since === undefined ? {} : { since }),
          }),
        ),
      );
    });
  }

  /**
   * Hangs up (as a client losing its network would) and returns the last seq it saw: frames still
   * on their way are not recorded (they arrived too late for the client, which resumes from here).
   */
  hangUp(): number {
    const ws = this.ws!;
    this.ws = null;
    ws.terminate();
    return this.last;
  }

  close(): void {
    const ws = this.ws;
    this.ws = null;
    ws?.close();
  }

  /** What is wrong with what this socket received, measured against the log. */
  differences(log: LoggedEvent[]): string[] {
    const wrong = [...this.problems];
    const firstOff = this.seqs.findIndex((seq, i) => seq !== i + 1);
    if (firstOff >= 0)
      wrong.push(
        `position ${firstOff} holds seq ${this.seqs[firstOff]}: ${this.seqs.slice(Math.max(0, firstOff - 3), firstOff + 3).join(',')}`,
      );
    if (this.seqs.length !== log.length) wrong.push(`received ${this.seqs.length} events, the log holds ${log.length}`);
    const mistyped = log.find((e) => this.types.has(e.seq) && this.types.get(e.seq) !== e.type);
    if (mistyped)
      wrong.push(`seq ${mistyped.seq} arrived as ${this.types.get(mistyped.seq)}, logged as ${mistyped.type}`);
    return wrong.map((w) => `${this.name}: ${w}`);
  }
}

/** The two-node proof against the MongoDB-wire server at `uri`, with a Redis of its own. */
export function nodesFlow(uri: string): void {
  describe('two server processes on one Redis and one MongoDB-wire store', () => {
    let redis: OwnRedis;
    let nodes: Node[] = [];
    const db = unique('nodes');
    /** Each node's readiness: the bus's health, or why it is not ready. */
    const readiness = (): Promise<string[]> =>
      Promise.all(
        nodes.map(async (node) => {
          const response = await fetch(`${node.url}/readyz`);
          const body = (await response.json()) as { bus?: string; error?: { message?: string } };
          return response.ok ? String(body.bus) : `${response.status} ${body.error?.message ?? ''}`;
        }),
      );
    /** Resolves once every node's bus is `health`; else fails saying what each node last answered and logged. */
    const busesAre = async (health: 'ok' | 'degraded', ms?: number) => {
      let last: string[] = [];
      await until(async () => (last = await readiness()).every((b) => b === health), ms).catch((e: Error) => {
        throw new Error(
          `${e.message}: buses ${health} expected, nodes answered ${JSON.stringify(last)}\n${nodeLogs()}`,
        );
      });
    };
    /** What each node logged of Redis, and its warnings and errors: a failed wait says why. */
    const nodeLogs = (): string => nodes.map((n, i) => `node ${i} logged:\n${n.redisLines()}`).join('\n');

    beforeAll(async () => {
      redis = await ownRedis();
      const env = {
        STORE: 'mongo',
        MONGODB_URI: uri,
        MONGODB_DB: db,
        REDIS_URL: redis.url,
        LEASE_MIN_TTL_SECONDS: '1',
        ...webhookOnlyBilling(WEBHOOK_SECRET),
      };
      nodes = await Promise.all([startNode(env), startNode(env)]);
      await busesAre('ok');
    }, 120_000);

    afterAll(async () => {
      await Promise.all(nodes.map((n) => n.stop()));
      redis?.kill();
      const { MongoClient } = await import('mongodb');
      const client = await MongoClient.connect(uri);
      await client.db(db).dropDatabase();
      await client.close();
    }, 60_000);

    it(
      '50 agents on both nodes finish the fleet through a Redis outage; every socket gets every event once, in order',
      { timeout: 900_000 },
      async () => {
        const items = 120;
        const watchers: Watcher[] = [];
        const nodeOf = new Map<Watcher, number>();
        const fleet = runFleet({
          baseUrls: nodes.map((n) => n.url),
          agents: 50,
          items,
          seed: 5_2026,
          timeoutMs: 780_000,
          async beforeWork({ projectId, owner, agents }) {
            const sockets = [
              ...nodes.map((_, i) => ({ name: `owner on node ${i}`, headers: owner, node: i })),
              ...agents.map((a, i) => ({
                name: `agent ${i} on node ${i % nodes.length}`,
                headers: a.auth,
                node: i % nodes.length,
              })),
            ];
            for (const s of sockets) {
              const w = new Watcher(s.name, s.headers, projectId);
              await w.connect(nodes[s.node]!.url);
              watchers.push(w);
              nodeOf.set(w, s.node);
            }
          },
        });

        // Once work is well under way: Redis dies; a few agents lose their socket and come back on the
        // other node with `since`; REST goes on answering; then Redis returns. Meanwhile no node can
        // learn a board's home, so board commands stop once the home's lease could have lapsed
        // (answered 503 BOARD_BUSY, which the agents retry) and go on when Redis is back.
        const outage = async () => {
          const owner = () => watchers[0]!;
          await until(() => watchers.length === 52 && owner().last >= items + 150, 300_000);
          redis.kill();
          await busesAre('degraded');
          const movers = watchers.slice(2, 12);
          const resumeFrom = movers.map((w) => w.hangUp());
          try {
            await new Promise((r) => setTimeout(r, HOME_LEASE_MS + 1000)); // past every home's sure lease
            // A commit decided while its home was still sure may still be landing (on a loaded store,
            // a batch of several events): wait until the log stands still; from then on it must.
            let seen = -1;
            await until(
              async () => {
                const now = owner().last;
                if (now === seen) return true;
                seen = now;
                await quietFor(1000); // a second with no commit at all
                return false;
              },
              { timeout: 60_000, what: 'board commands to stop once no node can be sure of a home' },
            );
            const stopped = owner().last;
            expect((await new Client(nodes[0]!.url).get('/readyz')).status).toBe(200); // REST goes on
            await Promise.all(movers.map((w, i) => w.connect(nodes[1 - nodeOf.get(w)!]!.url, resumeFrom[i])));
            await quietFor(1000); // agents keep retrying: a command decided now would land within it
            expect(owner().last).toBe(stopped);
          } finally {
            await redis.start(); // the suites after this one need Redis whatever happened here
          }
          // Each node reconnects within 2 s of Redis answering; a node under this load (and a store
          // it shares with the other suites) may take much longer to answer /readyz.
          await busesAre('ok', 60_000);
        };
        const [report] = await Promise.all([fleet, outage()]);
        expect(report.violations).toEqual([]);
        expect(report.events).toBeGreaterThan(items * 3);
        await until(() => watchers.every((w) => w.last >= report.events), 60_000).catch(() => undefined);
        for (const w of watchers) w.close();
        expect(watchers.flatMap((w) => w.differences(report.log))).toEqual([]);
        expect(watchers).toHaveLength(52);
      },
    );

    it(
      'pushes lease.expiring and lease.expired to a holder whose socket is on the other node and watches nothing',
      { timeout: 60_000 },
      async () => {
        const board = await newBoard(nodes[0]!.url);
        const holder = await board.agent('holder');
        expect((await holder.post('/api/items', { title: 'short lease' })).status).toBe(201);
        const socket = await openSocket(nodes[1]!.url, { authorization: holder.defaults.authorization! });
        const grant = await holder.post('/api/claim', { ttlSeconds: 1 });
        expect(grant.status).toBe(200);
        const expiring = await socket.next((m) => m.type === 'event' && m.event.type === 'lease.expiring', 20_000);
        expect(expiring).toMatchObject({
          boardId: board.projectId,
          seq: null,
          event: { workId: grant.body.workId, data: { holder: holder.principal, expiresAt: grant.body.expiresAt } },
        });
        const expired = await socket.next((m) => m.type === 'event' && m.event.type === 'lease.expired', 20_000);
        expect(expired).toMatchObject({ boardId: board.projectId, event: { workId: grant.body.workId } });
        expect(expired.seq).toBeGreaterThan(0);
        socket.ws.close();
      },
    );

    it(
      'gives a claim race on one item from both nodes exactly one winner, 200 times',
      { timeout: 600_000 },
      async () => {
        const rounds = 200;
        const board = await newBoard(nodes[0]!.url);
        const agents = await Promise.all(Array.from({ length: 6 }, (_, i) => board.agent(`racer-${i}`)));
        const racers = agents.map((a, i) => new Client(nodes[i % 2]!.url, a.defaults));
        const created = await racers[0]!.post('/api/items/batch', {
          items: Array.from({ length: rounds }, (_, i) => ({ title: `contested ${i}` })),
        });
        expect(created.status).toBe(201);
        const winners: number[] = [];
        const refusals = new Set<string>();
        for (let round = 1; round <= rounds; round++) {
          const results = await Promise.all(racers.map((r) => r.post('/api/claim', { workId: `W-${round}` })));
          winners.push(results.filter((r) => r.status === 200).length);
          for (const r of results) if (r.status !== 200) refusals.add(`${r.status} ${r.body?.error?.code}`);
        }
        expect(winners.filter((n) => n !== 1)).toEqual([]);
        expect([...refusals]).toEqual(['409 ITEM_NOT_READY']);
        const granted: { workId: string }[] = [];
        for (let before: number | null = null; ;) {
          const page = await board.owner.get(
            `/api/activity?projectId=${board.projectId}&limit=200${before ? `&before=${before}` : ''}`,
          );
          granted.push(...page.body.events.filter((e: { type: string }) => e.type === 'lease.granted'));
          if (page.body.nextBefore === null) break;
          before = page.body.nextBefore;
        }
        expect(granted).toHaveLength(rounds);
        expect(new Set(granted.map((e) => e.workId)).size).toBe(rounds);
      },
    );

    it(
      'keeps the log gapless and every lease fenced when a rewind on one node races 20 agents on both',
      { timeout: 180_000 },
      async () => {
        const board = await newBoard(nodes[0]!.url);
        const store = await openMongoStore({ uri, db });
        try {
          await makePro(nodes[1]!.url, store, board, WEBHOOK_SECRET);
        } finally {
          await store.close();
        }
        await rewindRace(
          nodes.map((n) => n.url),
          board,
        );
      },
    );
  });
}
