// A fleet of agents working a board over real HTTP at a set pace, for the suites that watch a page
// beside it: each agent claims, heartbeats and submits (now and then verifies another's work or
// releases its lease) on its own workspace token and budget. Cycles are spread over the agents by
// one schedule (the n-th cycle starts at n / rate s), so the fleet as a whole keeps the pace and an
// agent that fell behind catches up.
import { pace } from '../support/until.js';

export interface FleetAgent {
  auth: Record<string, string>;
  principal: string;
}

export interface FleetRun {
  /** Claims followed by their submit, verify or release. */
  cycles: number;
  /** Responses by status (a 409 is a lost race for an item, which agents meet). */
  statuses: Map<number, number>;
  seconds: number;
}

const hex = (n: number) => n.toString(16).padStart(8, '0').repeat(2);

/** Runs `agents` against `base` for `ms` at `rate` cycles a second (over all of them), then waits for the last cycles to end. */
export async function runPacedFleet(
  base: string,
  agents: FleetAgent[],
  options: { rate: number; ms: number },
): Promise<FleetRun> {
  const statuses = new Map<number, number>();
  const call = async (agent: FleetAgent, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...agent.auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const started = Date.now();
  const endAt = started + options.ms;
  let scheduled = 0;
  let cycles = 0;
  let commits = 0;

  const cycle = async (agent: FleetAgent, n: number) => {
    let grant = await call(agent, 'POST', '/api/claim', { purpose: n % 5 === 4 ? 'verify' : 'work' });
    if (grant.status === 409 && grant.body.error.code === 'NOTHING_READY')
      grant = await call(agent, 'POST', '/api/claim', { purpose: 'work' }); // nothing to verify yet
    if (grant.status !== 200) return;
    const verify = grant.body.purpose === 'verify';
    await call(agent, 'POST', '/api/status/heartbeat', {
      status: 'working',
      note: verify ? 'verifying' : 'building',
      workId: grant.body.workId,
    });
    if (verify) {
      const item = await call(agent, 'GET', `/api/items/${grant.body.workId}`);
      await call(agent, 'POST', '/api/verify', {
        workId: grant.body.workId,
        head: item.body.submission.head,
        verdict: 'pass',
      });
    } else if (n % 20 === 7) {
      await call(agent, 'POST', '/api/lease', { leaseId: grant.body.leaseId, action: 'release' });
    } else {
      await call(agent, 'POST', '/api/submit', { leaseId: grant.body.leaseId, head: hex(++commits) });
    }
    cycles++;
  };

  const loop = async (agent: FleetAgent) => {
    for (;;) {
      const n = scheduled++;
      const at = started + (n * 1000) / options.rate;
      if (at >= endAt) return;
      if (at > Date.now()) await pace(at - Date.now());
      await cycle(agent, n);
    }
  };
  await Promise.all(agents.map(loop));
  // Over the whole window: the last cycle may start just before its end and finish before it.
  return { cycles, statuses, seconds: (Math.max(Date.now(), endAt) - started) / 1000 };
}
