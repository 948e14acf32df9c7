// A rewind racing a working fleet (issue 14 "Concurrency"): 20 agents claim and submit on one Pro
// board, spread over the given nodes, while its owner rewinds it. Afterwards the log alone must
// show no lease from before the swap outliving it, no fencing token handed out twice, no submit
// without the submitter's live lease, and no gap.
import { expect } from 'vitest';
import { head, type TestBoard } from '../support/board.js';
import { Client } from '../support/server.js';
import { pace, until } from '../support/until.js';

interface Logged {
  seq: number;
  type: string;
  workId: string | null;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** The fleet submits in waves this far apart (see work below). */
const WAVE_MS = 4000;

/** POSTs as a well-behaved agent does: a 503 BOARD_BUSY (two nodes contending for one board) is retried after its Retry-After. */
async function post(agent: Client, path: string, body: unknown) {
  for (let attempt = 1; ; attempt++) {
    const res = await agent.post(path, body);
    if (res.status !== 503 || attempt === 20) return res;
    await pace(Number(res.headers.get('retry-after') ?? 1) * 100);
  }
}

/** The board's whole log, oldest first, read from /api/activity a page at a time. */
export async function readLog(owner: Client, projectId: string): Promise<Logged[]> {
  const events: Logged[] = [];
  for (let before: number | null = null; ;) {
    const page = await owner.get(`/api/activity?projectId=${projectId}&limit=200${before ? `&before=${before}` : ''}`);
    expect(page.status, page.text).toBe(200);
    events.push(...page.body.events);
    if (page.body.nextBefore === null) break;
    before = page.body.nextBefore;
  }
  return events.reverse();
}

/** What is wrong with the log around the rewind at `rewoundSeq`. */
function violations(log: Logged[], rewoundSeq: number): string[] {
  const wrong: string[] = [];
  log.forEach((e, i) => {
    if (e.seq !== i + 1) wrong.push(`gap: expected seq ${i + 1}, found ${e.seq}`);
  });
  const live = new Map<string, { holder: string; token: number; seq: number }>();
  const tokens = new Set<number>();
  let highestBefore = 0;
  for (const e of log) {
    const id = e.workId!;
    switch (e.type) {
      case 'lease.granted': {
        const { holder, fencingToken } = e.data.lease;
        if (tokens.has(fencingToken)) wrong.push(`seq ${e.seq}: fencing token ${fencingToken} handed out again`);
        tokens.add(fencingToken);
        if (e.seq < rewoundSeq) highestBefore = Math.max(highestBefore, fencingToken);
        else if (fencingToken <= highestBefore)
          wrong.push(`seq ${e.seq}: token ${fencingToken} after the rewind is not above ${highestBefore}`);
        if (live.has(id)) wrong.push(`seq ${e.seq}: ${id} granted while a lease on it lives`);
        live.set(id, { holder, token: fencingToken, seq: e.seq });
        break;
      }
      case 'lease.released':
      case 'lease.expired':
      case 'lease.revoked':
        live.delete(id);
        break;
      case 'item.submitted': {
        const lease = live.get(id);
        if (!lease || lease.holder !== e.data.by)
          wrong.push(`seq ${e.seq}: ${id} submitted by ${e.data.by} without its live lease`);
        live.delete(id);
        break;
      }
      case 'board.rewound':
        for (const [workId, lease] of live)
          wrong.push(`seq ${e.seq}: ${workId} kept the lease granted at seq ${lease.seq} through the rewind`);
        break;
    }
  }
  return wrong;
}

/**
 * Runs the race on `board` (already Pro) with agents spread over `nodes`: `itemCount` ready items and a
 * restore point of them, 20 agents claiming, working under the lease and submitting in waves 4 s apart,
 * and the owner rewinding to that point (preview, apply, again on REWIND_VERSION_MISMATCH) once the
 * work is under way. 400 items keep 20 agents busy well past the swap; a node that did not make the
 * board's last commit reads only what changed since the version it holds, so two nodes taking turns
 * cost what they change.
 */
export async function rewindRace(nodes: string[], board: TestBoard, itemCount = 400): Promise<void> {
  const feeder = await board.agent('feeder');
  expect(
    (
      await feeder.post('/api/items/batch', {
        items: Array.from({ length: itemCount }, (_, i) => ({ title: `race ${i}` })),
      })
    ).status,
  ).toBe(201);
  expect((await feeder.post('/api/items/batch', { items: [{ title: 'after the point' }] })).status).toBe(201);
  const listed = await board.owner.get(`/api/account/rewind?projectId=${board.projectId}`);
  const point = (listed.body.points as { restorePointId: string; itemCount: number; reason: string }[]).find(
    (p) => p.reason === 'batch' && p.itemCount === itemCount,
  )!;
  expect(point).toBeDefined();

  const tokens = await Promise.all(Array.from({ length: 20 }, (_, i) => board.agent(`racer-${i}`)));
  const agents = tokens.map((a, i) => new Client(nodes[i % nodes.length]!, a.defaults));
  let stop = false;
  let submits = 0;
  const refusedSubmits = new Map<string, number>();
  const work = async (agent: Client, n: number) => {
    for (let round = 0; !stop; round++) {
      const grant = await post(agent, '/api/claim', {});
      if (grant.status !== 200) {
        await pace(5);
        continue;
      }
      // The work itself, under the lease, until the next wave: the fleet submits in waves (and claims
      // again at once), so between waves every agent holds a lease and the graph stands still long
      // enough for a preview and an apply, however slow the store is.
      await pace(WAVE_MS - (Date.now() % WAVE_MS) + (n % 10) * 10);
      const submitted = await post(agent, '/api/submit', {
        leaseId: grant.body.leaseId,
        head: head(n * 10_000 + round),
      });
      if (submitted.status === 200) submits++;
      else refusedSubmits.set(submitted.body?.error?.code, (refusedSubmits.get(submitted.body?.error?.code) ?? 0) + 1);
    }
  };
  const rewindOnce = async () => {
    await until(() => submits >= 5, { what: 'five submits' });
    for (let attempt = 1; attempt <= 500; attempt++) {
      const seen = await board.owner.get(`/api/account/rewind?projectId=${board.projectId}`);
      const applied = await post(board.owner, `/api/account/rewind?projectId=${board.projectId}`, {
        restorePointId: point.restorePointId,
        confirm: 'REWIND_SERVICE_BOARD',
        expectedFingerprint: seen.body.currentFingerprint,
      });
      if (applied.status === 200) {
        await pace(WAVE_MS + 500); // the fleet goes on after the swap: its next wave submits leases the swap revoked
        stop = true;
        return applied.body as { fingerprint: string; revokedLeases: unknown[] };
      }
      expect(applied.body.error.code, applied.text).toBe('REWIND_VERSION_MISMATCH');
    }
    stop = true;
    throw new Error('the rewind never found the board still for long enough');
  };
  const [applied] = await Promise.all([rewindOnce(), ...agents.map(work)]);

  const log = await readLog(board.owner, board.projectId);
  const rewound = log.filter((e) => e.type === 'board.rewound');
  expect(rewound).toHaveLength(1);
  expect(violations(log, rewound[0]!.seq)).toEqual([]);
  // The leases the reply names are the ones the log revoked in the rewind's commit.
  const revoked = log.filter((e) => e.type === 'lease.revoked' && e.data.reason === 'rewound');
  expect(revoked).toHaveLength(applied.revokedLeases.length);
  // Whatever still holds a lease got it after the swap.
  const grantedBefore = log
    .filter((e) => e.type === 'lease.granted' && e.seq < rewound[0]!.seq)
    .map((e) => e.data.lease.fencingToken as number);
  const items = await board.owner.get(`/api/items?projectId=${board.projectId}&limit=1000`);
  for (const item of items.body.items as { workId: string; lease: { fencingToken: number } | null }[]) {
    if (item.lease) expect(item.lease.fencingToken, item.workId).toBeGreaterThan(Math.max(0, ...grantedBefore));
  }
  expect(submits).toBeGreaterThan(5);
  // The swap landed while agents held leases (enough items keep them busy well past it).
  expect(applied.revokedLeases.length).toBeGreaterThan(0);
  expect([...refusedSubmits.keys()].filter((code) => code !== 'LEASE_NOT_HELD')).toEqual([]);
}
