// GET /api/admin/durability: whether what is acknowledged is kept. The store's commits as this node
// saw them (latency, conflicts, failures), a ping, disk space under the embedded store's DATA_DIR,
// replication on MongoDB, this node's last retention purge, the mail queue and the bus.
import { statfs } from 'node:fs/promises';
import type { Config } from '../config.js';
import type { MailStats } from '../mail/mailer.js';
import type { Purged } from '../board/retention.js';
import type { Store } from '../../store/ports/store.js';
import { alertsOf } from './alerts.js';
import type { NodeFigures } from './utilization.js';

const SAMPLES = 1024;

/** Board commits as this node made them: a ring of recent latencies and running totals. */
export class CommitStats {
  private readonly latencies = new Float64Array(SAMPLES);
  private n = 0;
  committed = 0;
  /** The version check refused the commit (another writer came first): a retry, not a fault. */
  conflicts = 0;
  failures = 0;
  lastFailure: { at: number; error: string } | null = null;

  constructor(private readonly clock: () => number) {}

  observe(ms: number, outcome: 'committed' | 'conflict' | 'failed', error?: unknown): void {
    this.latencies[this.n++ % SAMPLES] = ms;
    if (outcome === 'committed') this.committed++;
    else if (outcome === 'conflict') this.conflicts++;
    else {
      this.failures++;
      // The error's class only: a driver's message may name hosts or credentials.
      this.lastFailure = { at: this.clock(), error: error instanceof Error ? error.name : 'Error' };
    }
  }

  /** Percentiles over the last 1,024 commits (milliseconds), or null before any. */
  latency(): { samples: number; p50: number; p99: number; max: number } | null {
    const held = Math.min(this.n, SAMPLES);
    if (!held) return null;
    const sorted = Array.from(this.latencies.subarray(0, held)).sort((a, b) => a - b);
    const at = (q: number) => round(sorted[Math.min(held - 1, Math.floor(q * held))]!);
    return { samples: held, p50: at(0.5), p99: at(0.99), max: round(sorted[held - 1]!) };
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/** The store with its board commits timed into `stats`; everything else passes through untouched. */
export function timedCommits(store: Store, stats: CommitStats): Store {
  const boards = store.boards;
  const commit: Store['boards']['commit'] = async (...args) => {
    const started = performance.now();
    try {
      const ok = await boards.commit(...args);
      stats.observe(performance.now() - started, ok ? 'committed' : 'conflict');
      return ok;
    } catch (e) {
      stats.observe(performance.now() - started, 'failed', e);
      throw e;
    }
  };
  // Each method bound once, on first use: every board read passes through here.
  const bound = new Map<string | symbol, unknown>([['commit', commit]]);
  const timed = new Proxy(boards, {
    get(target, prop) {
      const known = bound.get(prop);
      if (known !== undefined) return known;
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const method = (value as (...a: unknown[]) => unknown).bind(target);
      bound.set(prop, method);
      return method;
    },
  });
  return { ...store, boards: timed };
}

export interface PurgeReport {
  at: number;
  purged: Purged | null;
  error: string | null;
}

export interface DurabilitySources {
  config: Config;
  store: Store;
  commits: CommitStats;
  lastPurge(): PurgeReport | null;
  mail(): MailStats | undefined;
  bus(): 'local' | 'ok' | 'degraded';
  /** Other nodes heard on the bus recently. */
  peers(): number;
  usage(): {
    pendingRows: number;
    dropped: number;
    lastFlush: { at: number; rows: number; error: string | null } | null;
  };
  /** The nodes' figures as this node holds them (src/admin/utilization.ts), for the alerts. */
  nodes(): { nodeId: string; figures: NodeFigures }[];
  clock: () => number;
}

async function timed<T>(
  work: () => Promise<T>,
  limitMs: number,
): Promise<{ ok: true; ms: number; value: T } | { ok: false; ms: number; error: string }> {
  const started = performance.now();
  try {
    const value = await Promise.race([
      work(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), limitMs).unref()),
    ]);
    return { ok: true, ms: round(performance.now() - started), value };
  } catch (e) {
    return {
      ok: false,
      ms: round(performance.now() - started),
      error: e instanceof Error && e.message === 'timeout' ? 'timeout' : e instanceof Error ? e.name : 'Error',
    };
  }
}

async function disk(
  config: Config,
): Promise<
  | { path: string; totalBytes: number; freeBytes: number; availableBytes: number }
  | { path: string; error: string }
  | null
> {
  if (config.store.kind !== 'embedded') return null;
  const path = config.store.dataDir;
  try {
    const s = await statfs(path);
    return { path, totalBytes: s.blocks * s.bsize, freeBytes: s.bfree * s.bsize, availableBytes: s.bavail * s.bsize };
  } catch (e) {
    return { path, error: (e as NodeJS.ErrnoException).code ?? 'Error' };
  }
}

export async function durability(src: DurabilitySources) {
  const { store, config, commits } = src;
  const [ping, space, replication, outbox] = await Promise.all([
    timed(() => store.ping(), 2000),
    store.kind === 'embedded' ? disk(config) : Promise.resolve(null),
    store.replication ? timed(() => store.replication!(), 2000) : Promise.resolve(null),
    timed(() => store.mailOutbox.count({}), 2000),
  ]);
  const purge = src.lastPurge();
  const report = {
    at: src.clock(),
    store: {
      kind: store.kind,
      ping: ping.ok ? { ok: true, ms: ping.ms } : { ok: false, ms: ping.ms, error: ping.error },
      commits: {
        committed: commits.committed,
        conflicts: commits.conflicts,
        failures: commits.failures,
        lastFailure: commits.lastFailure,
        latencyMs: commits.latency(),
      },
      disk: space,
      replication: replication === null ? null : replication.ok ? replication.value : { error: replication.error },
    },
    retention: purge && { at: purge.at, purged: purge.purged, error: purge.error },
    mail: { node: src.mail() ?? null, outbox: outbox.ok ? outbox.value : null },
    bus: { state: src.bus(), peersHeard: src.peers() },
    usageCounters: src.usage(),
  };
  return { ...report, alerts: alertsOf(report, src.nodes()) };
}
