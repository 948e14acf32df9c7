// A rewind that lands while a fleet works (issue 27): 20 agents claim and submit at full speed on a
// Pro board, spread over the given nodes; the owner pauses the board (on the last node), previews
// a restore point and applies it on the first try (on the first node), and resumes. While paused
// the agents' claims and submits are refused with BOARD_PAUSED and they keep renewing the leases
// they hold; the rewind revokes every lease on a replaced item; after the resume the agents carry
// on to the end. The log alone must then pass the fleet simulator's checks (one holder at a time,
// fencing rising, dependencies done before a claim, no gap, everything done), with no fencing
// token handed out twice and nothing but renewals, expiries, comments and the rewind between the
// pause and the resume.
import { expect } from 'vitest';
import { checkLog, type LoggedEvent } from '../../bench/fleet-sim.js';
import { head, type TestBoard } from '../support/board.js';
import { Client, type Res } from '../support/server.js';
import { openSocket } from '../support/socket.js';
import { pace, until } from '../support/until.js';
import { readLog } from './rewind-race.js';

const AGENTS = 20;
/** What may be logged while the board is paused. */
const WHILE_PAUSED = new Set([
  'lease.renewed',
  'lease.expired',
  'lease.revoked',
  'item.state',
  'item.comment',
  'board.rewound',
]);

/** A POST as a well-behaved agent sends it: 503 (two nodes contending for one board) is retried after its Retry-After. */
async function post(client: Client, path: string, body: unknown): Promise<Res> {
  for (let attempt = 1; ; attempt++) {
    const res = await client.post(path, body);
    if (res.status !== 503 || attempt === 20) return res;
    await pace(Number(res.headers.get('retry-after') ?? 1) * 100);
  }
}

/** The owner's session, sending its requests to another node. */
function sessionOn(url: string, owner: Client): Client {
  const client = new Client(url);
  client.cookies = new Map(owner.cookies);
  client.csrfToken = owner.csrfToken;
  return client;
}

function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

/**
 * Runs the scenario on `board` (already Pro) with the agents spread over `nodes`. `items` work
 * items form a random dependency graph; an operator's block of the last one keeps the restore point
 * the owner rewinds to.
 */
export async function pauseFleet(nodes: string[], board: TestBoard, items = 120): Promise<void> {
  const { projectId } = board;
  const owner = board.owner;
  const ownerOnLast = sessionOn(nodes.at(-1)!, owner);
  const q = `projectId=${projectId}`;
  const random = seeded(27);
  const feeder = await board.agent('feeder');
  const specs = Array.from({ length: items }, (_, i) => ({
    ref: `r${i}`,
    title: `work ${i}`,
    maxAttempts: 20,
    dependsOn:
      i === 0
        ? []
        : [...new Set(Array.from({ length: Math.floor(random() * 3) }, () => `r${Math.floor(random() * i)}`))],
  }));
  expect((await feeder.post('/api/items/batch', { items: specs })).status).toBe(201);

  const tokens = await Promise.all(Array.from({ length: AGENTS }, (_, i) => board.agent(`worker-${i}`)));
  const agents = tokens.map((t, i) => new Client(nodes[i % nodes.length]!, t.defaults));
  const watcher = await openSocket(nodes.at(-1)!, { authorization: tokens[0]!.defaults.authorization! });
  watcher.send({ type: 'subscribe', boardId: projectId, topics: ['items'] });
  await watcher.next((m) => m.type === 'subscribed');

  let stop = false;
  let phase: 'running' | 'paused' | 'resumed' = 'running';
  let submits = 0;
  const seen = { pausedRefusals: 0, renewalsWhilePaused: 0, toldRewound: 0, submitsAfterResume: 0 };
  const unexpected: string[] = [];
  const work = async (agent: Client, n: number) => {
    for (let round = 0; !stop; round++) {
      const grant = await post(agent, '/api/claim', {});
      if (grant.status !== 200) {
        const code = grant.body?.error?.code;
        if (code === 'BOARD_PAUSED') seen.pausedRefusals++;
        else if (code !== 'NOTHING_READY') unexpected.push(`claim: ${grant.status} ${grant.text.slice(0, 200)}`);
        await pace(code === 'BOARD_PAUSED' ? 100 : 20);
        continue;
      }
      // A few milliseconds of work, then the submit; while the board is paused, keeps the lease alive until the submit lands.
      await pace(10 + (round % 5) * 10);
      for (;;) {
        const submitted = await post(agent, '/api/submit', {
          leaseId: grant.body.leaseId,
          head: head(n * 100_000 + round),
        });
        if (submitted.status === 200) {
          submits++;
          if (phase === 'resumed') seen.submitsAfterResume++;
          break;
        }
        const code = submitted.body?.error?.code;
        if (code === 'LEASE_NOT_HELD') break; // revoked under it (the operator's block, or the rewind)
        if (code !== 'BOARD_PAUSED') {
          unexpected.push(`submit: ${submitted.status} ${submitted.text.slice(0, 200)}`);
          break;
        }
        seen.pausedRefusals++;
        await pace(100);
        const renewed = await post(agent, '/api/lease', { leaseId: grant.body.leaseId, action: 'renew' });
        if (renewed.status !== 200) {
          unexpected.push(`renew: ${renewed.status} ${renewed.text.slice(0, 200)}`);
          break;
        }
        if (renewed.body.revoked) {
          if (renewed.body.reason === 'rewound') seen.toldRewound++;
          break;
        }
        if (phase === 'paused') seen.renewalsWhilePaused++;
      }
    }
  };

  const status = async (client: Client = owner) => {
    const res = await client.get(`/api/status?${q}`);
    expect(res.status, res.text).toBe(200);
    return res.body as {
      paused: boolean;
      pausedBy: string | null;
      counts: Record<string, number>;
      leases: { workId: string; holder: string; purpose: string }[];
    };
  };
  const done = async () => (await status()).counts.done!;

  const steer = async () => {
    await until(async () => (await done()) >= 15, 120_000);
    // An operator's move keeps a point of the board just before it: the one to go back to.
    const blocked = await owner.post(`/api/items/W-${items}/state?${q}`, {
      action: 'block',
      reason: 'an agent is wrecking it',
    });
    expect(blocked.status, blocked.text).toBe(200);
    const listed = await owner.get(`/api/account/rewind?${q}`);
    const point = (listed.body.points as { restorePointId: string; reason: string }[]).find(
      (p) => p.reason === 'state',
    )!;
    expect(point).toBeDefined();
    const doneAtPoint = await done();
    await until(async () => (await done()) >= doneAtPoint + 20, 120_000);

    // Pause (on the last node): every node refuses claims and changes from the moment it commits.
    const paused = await ownerOnLast.request('PATCH', `/api/projects/${projectId}`, { json: { paused: true } });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body).toMatchObject({ projectId, paused: true, pausedBy: expect.stringMatching(/^user:/) });
    phase = 'paused';
    expect(await status()).toMatchObject({ paused: true, pausedBy: paused.body.pausedBy });

    // Preview (on the first node) while the agents meet the pause and keep their leases alive.
    const preview = await owner.get(`/api/account/rewind?${q}&restorePointId=${point.restorePointId}`);
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.preview.changed.map((c: { workId: string }) => c.workId)).toContain(`W-${items}`);
    await until(() => seen.pausedRefusals >= AGENTS && seen.renewalsWhilePaused >= 5, 60_000);
    // Renewals, refusals and all, the graph stands still: the preview's fingerprint is still the board's.
    expect((await owner.get(`/api/account/rewind?${q}`)).body.currentFingerprint).toBe(preview.body.currentFingerprint);
    const held = (await status()).leases.map((l) => ({ workId: l.workId, holder: l.holder, purpose: l.purpose }));
    expect(held.length).toBeGreaterThan(0);

    // Apply: it lands at the first try, and ends every lease on a replaced item (a whole-board rewind replaces them all).
    const applied = await owner.post(`/api/account/rewind?${q}`, {
      restorePointId: point.restorePointId,
      confirm: 'REWIND_SERVICE_BOARD',
      expectedFingerprint: preview.body.currentFingerprint,
    });
    expect(applied.status, applied.text).toBe(200);
    const byItem = (a: { workId: string }, b: { workId: string }) =>
      Number(a.workId.slice(2)) - Number(b.workId.slice(2));
    expect([...applied.body.revokedLeases].sort(byItem)).toEqual(held.sort(byItem));
    expect(await status()).toMatchObject({ paused: true, leases: [] });
    // The holders learn it at their next renewal.
    await until(() => seen.toldRewound >= 1, 60_000);

    const resumed = await ownerOnLast.request('PATCH', `/api/projects/${projectId}`, { json: { paused: false } });
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.body).toMatchObject({ paused: false, pausedBy: null, pausedAt: null });
    phase = 'resumed';
    await until(async () => (await done()) === items, 240_000);
    stop = true;
    return applied.body as { revokedLeases: unknown[] };
  };

  let applied: { revokedLeases: unknown[] };
  try {
    [applied] = await Promise.all([steer(), ...agents.map(work)]);
  } finally {
    stop = true;
  }
  if (process.env.PAUSE_DEBUG) console.log(JSON.stringify({ seen, submits, revoked: applied!.revokedLeases.length }));
  expect(unexpected).toEqual([]);
  expect(seen.submitsAfterResume).toBeGreaterThan(0);
  expect(submits).toBeGreaterThan(items);

  // The sockets on the last node heard the pause, the rewind and the resume, in that order.
  expect((await watcher.next((m) => m.type === 'event' && m.event.type.startsWith('board.'), 30_000)).event.type).toBe(
    'board.paused',
  );
  expect((await watcher.next((m) => m.type === 'event' && m.event.type.startsWith('board.'), 30_000)).event.type).toBe(
    'board.rewound',
  );
  expect((await watcher.next((m) => m.type === 'event' && m.event.type.startsWith('board.'), 30_000)).event.type).toBe(
    'board.resumed',
  );
  watcher.ws.close();

  const log = (await readLog(owner, projectId)) as LoggedEvent[];
  expect(checkLog(log)).toEqual([]);
  const tokensGranted = log.filter((e) => e.type === 'lease.granted').map((e) => e.data.lease.fencingToken as number);
  expect(new Set(tokensGranted).size).toBe(tokensGranted.length);
  const at = (type: string) => log.filter((e) => e.type === type).map((e) => e.seq);
  expect([at('board.paused').length, at('board.rewound').length, at('board.resumed').length]).toEqual([1, 1, 1]);
  const [pausedSeq, rewoundSeq, resumedSeq] = [
    at('board.paused')[0]!,
    at('board.rewound')[0]!,
    at('board.resumed')[0]!,
  ];
  expect(pausedSeq < rewoundSeq && rewoundSeq < resumedSeq).toBe(true);
  const between = log.filter((e) => e.seq > pausedSeq && e.seq < resumedSeq);
  expect([...new Set(between.map((e) => e.type))].filter((t) => !WHILE_PAUSED.has(t))).toEqual([]);
  expect(between.filter((e) => e.type === 'lease.revoked' && e.data.reason === 'rewound')).toHaveLength(
    applied!.revokedLeases.length,
  );
  // The agents carried on after the resume.
  expect(log.filter((e) => e.seq > resumedSeq && e.type === 'lease.granted').length).toBeGreaterThan(0);
}
