// A simulated agent fleet over real HTTP: agents with their own tokens pull from a board with a
// random dependency graph (a third gated by verification) until every item is done, with lease
// expiries, releases, supersedes and failed verifications along the way. Afterwards the event log
// is checked: no overlapping holders, dependencies done before dependents were claimed, every gated
// item passed by an independent agent on its final head, and no gap in seq.

export interface FleetOptions {
  /**
   * The nodes: agents are spread over them in turn (or each request goes to the next, with
   * `spread: 'request'`); the owner uses the first. A node taken out of this list meanwhile gets
   * no new requests, as a load balancer drops a dead node.
   */
  baseUrls: string[];
  spread?: 'agent' | 'request';
  agents: number;
  items: number;
  seed?: number;
  /** Give up after this long. */
  timeoutMs?: number;
  /** Called once the agents have their tokens, before the first item exists. */
  beforeWork?: (fleet: FleetSetup) => Promise<void>;
}

export interface FleetAgent {
  auth: Record<string, string>;
  principal: string;
  /** The node this agent talks to. */
  baseUrl: string;
}

export interface FleetSetup {
  projectId: string;
  owner: Record<string, string>;
  agents: FleetAgent[];
}

export interface LoggedEvent {
  seq: number;
  type: string;
  actor: string;
  workId: string | null;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface FleetReport {
  claims: number;
  seconds: number;
  claimsPerSecond: number;
  events: number;
  expiries: number;
  failedVerifications: number;
  supersedes: number;
  releases: number;
  violations: string[];
  /** Writes the agents had a 200 for: each must be in the log (checked into `violations`). */
  acknowledged: number;
  /** The whole event log, oldest first. */
  log: LoggedEvent[];
}

interface Res {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A request to `base` (or, when `base` is a function, to the node it names at each try), retried on
 * 503 (for up to about 25 s: a failover, or Redis away from every node, when board commands wait
 * for it) and on a connection that fails.
 */
async function call(
  base: string | (() => string),
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Res> {
  for (let attempt = 0; ; attempt++) {
    const url = `${typeof base === 'string' ? base : base()}${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      if (attempt >= 20) throw e;
      await sleep(50 * (attempt + 1));
      continue;
    }
    const text = await res.text();
    if (res.status === 503 && attempt < 60) {
      await sleep(Math.min(500, 20 * (attempt + 1)));
      continue;
    }
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
}

export async function runFleet(options: FleetOptions): Promise<FleetReport> {
  const random = rng(options.seed ?? Date.now());
  const base = options.baseUrls[0]!;
  const stats = { claims: 0, expiries: 0, failedVerifications: 0, supersedes: 0, releases: 0 };

  // An owner with a board, and one workspace token per agent.
  const email = `fleet-${Date.now()}-${Math.floor(random() * 1e9)}@example.com`;
  const signup = await fetch(`${base}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'fleet password 123' }),
  });
  const cookie = signup.headers.getSetCookie()[0]!.split(';')[0]!;
  const owner = { cookie, 'x-csrf-token': ((await signup.json()) as { csrfToken: string }).csrfToken };
  const projects = await call(base, 'GET', '/api/projects', owner);
  const projectId = projects.body.projects[0].projectId as string;
  const agents: FleetAgent[] = [];
  for (let i = 0; i < options.agents; i++) {
    const t = await call(base, 'POST', '/api/accounts/tokens', owner, {
      name: `agent-${i}`,
      scope: 'workspace',
      projectId,
    });
    agents.push({
      auth: { authorization: `Bearer ${t.body.secret}` },
      principal: `agent:${t.body.token.agentId}`,
      baseUrl: options.baseUrls[i % options.baseUrls.length]!,
    });
  }
  await options.beforeWork?.({ projectId, owner, agents });

  // A random DAG: each item depends on up to three earlier ones; a third need verification.
  const items = Array.from({ length: options.items }, (_, i) => ({
    ref: `r${i}`,
    title: `item ${i}`,
    priority: Math.floor(random() * 5),
    maxAttempts: 20,
    verify: random() < 1 / 3 ? 'required' : 'none',
    dependsOn:
      i === 0
        ? []
        : [...new Set(Array.from({ length: Math.floor(random() * 4) }, () => `r${Math.floor(random() * i)}`))],
  }));
  for (let i = 0; i < items.length; i += 500) {
    const created = await call(agents[0]!.baseUrl, 'POST', '/api/items/batch', agents[0]!.auth, {
      items: items.slice(i, i + 500),
    });
    if (created.status !== 201) throw new Error(`batch: ${JSON.stringify(created.body)}`);
  }

  const started = performance.now();
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  let finished = false;
  const hex = () => Array.from({ length: 12 }, () => Math.floor(random() * 16).toString(16)).join('');

  // Grants and submissions answered 200: the log must hold every one.
  const acked: { workId: string; what: string; found: (e: LoggedEvent) => boolean }[] = [];
  const agentLoop = async (agent: FleetAgent, index: number) => {
    let turn = index;
    const base =
      options.spread === 'request' ? () => options.baseUrls[turn++ % options.baseUrls.length]! : agent.baseUrl;
    let idle = 0;
    while (!finished && Date.now() < deadline) {
      const purpose = random() < 0.5 ? 'verify' : 'work';
      let grant = await call(base, 'POST', '/api/claim', agent.auth, { purpose });
      if (grant.status === 409 && grant.body.error.code === 'NOTHING_READY')
        grant = await call(base, 'POST', '/api/claim', agent.auth, { purpose: purpose === 'work' ? 'verify' : 'work' });
      if (grant.status !== 200) {
        idle++;
        await sleep(Math.min(200, 10 * idle));
        continue;
      }
      idle = 0;
      stats.claims++;
      const lease = grant.body;
      acked.push({
        workId: lease.workId,
        what: `grant of ${lease.workId} at fencing ${lease.fencingToken} to ${agent.principal}`,
        found: (e) =>
          e.type === 'lease.granted' &&
          e.workId === lease.workId &&
          e.data.lease.fencingToken === lease.fencingToken &&
          e.data.lease.holder === agent.principal,
      });
      const roll = random();
      if (lease.purpose === 'work') {
        if (roll < 0.04) {
          // Stall past a short lease: it must expire under us, and our late submit must be refused.
          const short = await call(base, 'POST', '/api/lease', agent.auth, {
            leaseId: lease.leaseId,
            action: 'renew',
            ttlSeconds: 1,
          });
          if (short.status === 200) {
            await sleep(1500);
            const late = await call(base, 'POST', '/api/submit', agent.auth, { leaseId: lease.leaseId, head: hex() });
            if (late.status === 200) throw new Error('a stalled holder submitted after its lease expired');
            stats.expiries++;
          }
          continue;
        }
        if (roll < 0.08) {
          await call(base, 'POST', '/api/lease', agent.auth, { leaseId: lease.leaseId, action: 'release' });
          stats.releases++;
          continue;
        }
        const head = hex();
        const submitted = await call(base, 'POST', '/api/submit', agent.auth, { leaseId: lease.leaseId, head });
        if (submitted.status === 200)
          acked.push({
            workId: lease.workId,
            what: `submission of ${lease.workId} at ${head}`,
            found: (e) => e.type === 'item.submitted' && e.workId === lease.workId && e.data.head === head,
          });
        if (submitted.status === 200 && submitted.body.state === 'awaiting_verify' && random() < 0.15) {
          const sup = await call(base, 'POST', '/api/supersede', agent.auth, { workId: lease.workId, head: hex() });
          if (sup.status === 200) stats.supersedes++;
        }
        continue;
      }
      const item = await call(base, 'GET', `/api/items/${lease.workId}`, agent.auth);
      const currentHead = item.body.submission?.head;
      if (!currentHead) continue;
      if (roll < 0.15) {
        const failed = await call(base, 'POST', '/api/verify', agent.auth, {
          workId: lease.workId,
          head: currentHead,
          verdict: 'fail',
          finding: `sha256:${'e'.repeat(64)}`,
        });
        if (failed.status === 200) stats.failedVerifications++;
      } else {
        await call(base, 'POST', '/api/verify', agent.auth, {
          workId: lease.workId,
          head: currentHead,
          verdict: 'pass',
        });
      }
    }
  };

  // The owner's node: the first one still in the list.
  const ownerNode = () => options.baseUrls[0]!;
  // A read may meet a failover: 503 BOARD_BUSY past call()'s retries is waited out; any other
  // refusal of the owner's read is wrong and reported.
  const wrongReads: string[] = [];
  const watcher = async () => {
    while (!finished && Date.now() < deadline) {
      const status = await call(ownerNode, 'GET', `/api/status?projectId=${projectId}`, owner);
      if (status.status !== 200 && status.status !== 503)
        wrongReads.push(`the owner's status read answered ${status.status} ${JSON.stringify(status.body)}`);
      if (status.status === 200 && status.body.counts.done === options.items) finished = true;
      else await sleep(250);
    }
  };
  await Promise.all([watcher(), ...agents.map((a, i) => agentLoop(a, i))]);
  const seconds = (performance.now() - started) / 1000;
  if (!finished) throw new Error(`the fleet did not finish within ${options.timeoutMs ?? 300_000} ms`);

  // Read the whole log, oldest first.
  const events: LoggedEvent[] = [];
  for (let before: number | null = null; ;) {
    const page: Res = await call(
      ownerNode,
      'GET',
      `/api/activity?projectId=${projectId}&limit=200${before ? `&before=${before}` : ''}`,
      owner,
    );
    events.push(...page.body.events);
    if (page.body.nextBefore === null) break;
    before = page.body.nextBefore;
  }
  events.reverse();
  const byItem = new Map<string | null, LoggedEvent[]>();
  for (const e of events) byItem.set(e.workId, [...(byItem.get(e.workId) ?? []), e]);
  const lost = acked
    .filter((a) => !byItem.get(a.workId)?.some(a.found))
    .map((a) => `acknowledged ${a.what}, not in the log`);
  return {
    ...stats,
    seconds,
    claimsPerSecond: stats.claims / seconds,
    events: events.length,
    violations: [...checkLog(events), ...lost, ...wrongReads],
    acknowledged: acked.length,
    log: events,
  };
}

/** The invariants, read from the event log alone. */
export function checkLog(events: LoggedEvent[]): string[] {
  const violations: string[] = [];
  events.forEach((e, i) => {
    if (e.seq !== i + 1) violations.push(`gap: expected seq ${i + 1}, found ${e.seq}`);
  });
  const deps = new Map<string, string[]>();
  const state = new Map<string, string>();
  const holder = new Map<string, string | null>();
  const workersSinceReady = new Map<string, Set<string>>();
  const lastHead = new Map<string, { head: string; by: string }>();
  const fencing = new Map<string, number>();
  const passes = new Map<string, { by: string; head: string }>();
  for (const e of events) {
    const id = e.workId!;
    switch (e.type) {
      case 'item.created':
        deps.set(id, e.data.dependsOn);
        state.set(id, e.data.state);
        workersSinceReady.set(id, new Set());
        break;
      case 'item.state':
        state.set(id, e.data.to);
        if (e.data.to === 'ready') workersSinceReady.set(id, new Set());
        break;
      case 'lease.granted':
        if (holder.get(id))
          violations.push(`seq ${e.seq}: ${id} granted to ${e.data.lease.holder} while ${holder.get(id)} held it`);
        holder.set(id, e.data.lease.holder);
        if (e.data.lease.fencingToken <= (fencing.get(id) ?? 0))
          violations.push(
            `seq ${e.seq}: ${id} granted at fencing ${e.data.lease.fencingToken}, not above ${fencing.get(id)}`,
          );
        fencing.set(id, e.data.lease.fencingToken);
        if (!workersSinceReady.has(id)) violations.push(`seq ${e.seq}: ${id} granted but never created in the log`);
        if (e.data.lease.purpose === 'work') {
          workersSinceReady.get(id)?.add(e.data.lease.holder);
          for (const d of deps.get(id) ?? [])
            if (state.get(d) !== 'done')
              violations.push(`seq ${e.seq}: ${id} claimed while its dependency ${d} was ${state.get(d)}`);
        }
        break;
      case 'lease.released':
      case 'lease.expired':
      case 'lease.revoked':
        holder.set(id, null);
        break;
      case 'item.submitted':
        holder.set(id, null);
        lastHead.set(id, { head: e.data.head, by: e.data.by });
        passes.delete(id);
        break;
      case 'item.superseded':
        lastHead.set(id, { head: e.data.head, by: e.data.by });
        break;
      case 'item.verified': {
        holder.set(id, null);
        const v = e.data.verification;
        if (v.verdict === 'pass') {
          const sub = lastHead.get(id);
          if (!sub || v.head !== sub.head)
            violations.push(`seq ${e.seq}: ${id} passed on ${v.head}, not its head ${sub?.head}`);
          if (sub && v.by === sub.by) violations.push(`seq ${e.seq}: ${id} verified by its submitter`);
          if (workersSinceReady.get(id)?.has(v.by))
            violations.push(`seq ${e.seq}: ${id} verified by a principal that worked on it`);
          passes.set(id, v);
        }
        break;
      }
    }
  }
  for (const [id, s] of state) if (s !== 'done') violations.push(`${id} ended ${s}`);
  return violations;
}
