// GET /api/admin/utilization: what each node carries. Every node samples its own figures (boards
// active, sockets, requests and commits per minute, lease timers, mailbox depths, event-loop delay,
// memory) and tells the others through the bus every few seconds; the node asked lists what it
// heard recently beside its own figures, taken at the time of asking. Each round's figures also carry
// the round's sample for the hour of history behind the Overview's charts (src/admin/node-history.ts).
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { z } from 'zod';
import { NodeHistory, NodeSample, SampleColumns } from './node-history.js';

/** How often each node tells the others its figures; a node not heard from for three rounds is left out. */
export const FIGURES_EVERY_MS = 5_000;
const STALE_AFTER_MS = 3 * FIGURES_EVERY_MS;
/** One hour of samples, one a round. */
export const HISTORY_MS = 3_600_000;
/** A round shorter than this (the first, told as the node starts) adds no sample: its rates would be noise. */
const MIN_SAMPLE_MS = 1_000;
/** At most this many other nodes are remembered (figures come from the bus, which every node shares). */
const MAX_NODES = 256;

const count = z.number().int().min(0).max(1e12);
const ms = z.number().min(0).max(1e9);

export const NodeFigures = z.object({
  nodeId: z.string().min(1).max(200),
  at: z.number().int().min(0),
  startedAt: z.number().int().min(0),
  boardsActive: count,
  sockets: count,
  inFlight: count,
  requestsPerMinute: count,
  commitsPerMinute: count,
  leaseTimers: count,
  mailboxDepth: count,
  eventLoopDelayMs: z.object({ mean: ms, p99: ms, max: ms }),
  memory: z.object({ rss: count, heapUsed: count, heapTotal: count, external: count }),
  bus: z.enum(['local', 'ok', 'degraded']),
  /** The last round's sample (a node that has taken none yet, or an older one, sends none). */
  sample: NodeSample.optional(),
});
export type NodeFigures = z.infer<typeof NodeFigures>;

/** What the figures carry on the bus besides: the history's asks and answers (src/admin/node-history.ts). */
const ToldFigures = NodeFigures.extend({
  wants: z
    .array(z.object({ nodeId: z.string().min(1).max(200), after: z.number().min(0) }))
    .max(256)
    .optional(),
  history: SampleColumns.optional(),
});
type ToldFigures = z.infer<typeof ToldFigures>;

/** A node's own figures, told every few seconds, for the operators' utilization view. */
export type NodeFiguresNotice = {
  kind: 'node.figures';
  figures: ToldFigures;
};

/** Counts over the last minute in six ten-second slices: adding costs an index and an add. */
export class PerMinute {
  private readonly slices = new Float64Array(6);
  private readonly starts = new Float64Array(6).fill(-Infinity);

  add(now: number, n = 1): void {
    const start = Math.floor(now / 10_000) * 10_000;
    const i = (start / 10_000) % 6;
    if (this.starts[i] !== start) {
      this.starts[i] = start;
      this.slices[i] = 0;
    }
    this.slices[i]! += n;
  }

  /** What was added in the last 60 s (50 to 60 s: whole slices). */
  value(now: number): number {
    const oldest = Math.floor(now / 10_000) * 10_000 - 50_000;
    let total = 0;
    for (let i = 0; i < 6; i++) if (this.starts[i]! >= oldest) total += this.slices[i]!;
    return total;
  }
}

/** Counts over the last minute, and since the last round's sample. */
export class Counted extends PerMinute {
  private round = 0;

  override add(now: number, n = 1): void {
    super.add(now, n);
    this.round += n;
  }

  /** What was added since the last call. */
  take(): number {
    const n = this.round;
    this.round = 0;
    return n;
  }
}

/** Of requests answered this round, at most this many latencies are kept (a uniform reservoir beyond). */
const LATENCIES = 4096;

/**
 * Requests answered: each added as its response is written (src/admin/watch.ts `record`, from the
 * pipeline's end) with the time it started, so the clock's reading then is its latency.
 */
export class Answered extends Counted {
  private readonly latencies = new Float64Array(LATENCIES);
  private seen = 0;

  constructor(private readonly clock: () => number) {
    super();
  }

  override add(startedAt: number, n = 1): void {
    super.add(startedAt, n);
    const ms = Math.max(0, this.clock() - startedAt);
    const i = this.seen < LATENCIES ? this.seen : Math.floor(Math.random() * (this.seen + 1));
    if (i < LATENCIES) this.latencies[i] = ms;
    this.seen++;
  }

  /** The round's 99th percentile latency in ms (0 without requests), and a fresh round. */
  takeP99(): number {
    const held = Math.min(this.seen, LATENCIES);
    this.seen = 0;
    if (!held) return 0;
    const sorted = this.latencies.slice(0, held).sort();
    return sorted[Math.min(held - 1, Math.floor(0.99 * held))]!;
  }
}

export interface NodeSources {
  boardsActive(): number;
  sockets(): number;
  inFlight(): number;
  leaseTimers(): number;
  mailboxDepth(): number;
  bus(): 'local' | 'ok' | 'degraded';
}

/** This node's figures, and the other nodes' as last heard. */
export class Utilization {
  readonly requests: Answered;
  readonly commits = new Counted();
  /** The last hour's samples, this node's and those heard. */
  readonly history: NodeHistory;
  private readonly heard = new Map<string, NodeFigures>();
  private readonly loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });
  /** Where this round's sample began. */
  private roundFrom: number;

  constructor(
    private readonly nodeId: string,
    private readonly startedAt: number,
    private readonly sources: NodeSources,
    private readonly clock: () => number,
  ) {
    this.loop.enable();
    this.requests = new Answered(clock);
    this.history = new NodeHistory(nodeId, HISTORY_MS / FIGURES_EVERY_MS, clock);
    this.roundFrom = startedAt;
  }

  /**
   * This node's figures now; the event-loop delay is over the time since the last call that reset it.
   * Resetting ends a round: its sample is recorded, and the figures carry it with the history's news.
   */
  sample(reset = false): ToldFigures {
    const now = this.clock();
    const memory = process.memoryUsage();
    const nsToMs = (ns: number) => (Number.isFinite(ns) ? Math.round(ns / 1e4) / 100 : 0);
    const figures: NodeFigures = {
      nodeId: this.nodeId,
      at: now,
      startedAt: this.startedAt,
      boardsActive: this.sources.boardsActive(),
      sockets: this.sources.sockets(),
      inFlight: Math.max(0, this.sources.inFlight()),
      requestsPerMinute: this.requests.value(now),
      commitsPerMinute: this.commits.value(now),
      leaseTimers: this.sources.leaseTimers(),
      mailboxDepth: this.sources.mailboxDepth(),
      eventLoopDelayMs: {
        mean: nsToMs(this.loop.mean),
        p99: nsToMs(this.loop.percentile(99)),
        max: nsToMs(this.loop.max),
      },
      memory: { rss: memory.rss, heapUsed: memory.heapUsed, heapTotal: memory.heapTotal, external: memory.external },
      bus: this.sources.bus(),
    };
    if (!reset) {
      const last = this.history.last;
      return last ? { ...figures, sample: last } : figures;
    }
    this.loop.reset();
    return { ...figures, ...this.history.recorded(this.roundSample(figures)) };
  }

  private roundSample(figures: NodeFigures): NodeSample | null {
    const from = this.roundFrom;
    if (figures.at - from < MIN_SAMPLE_MS) return null;
    this.roundFrom = figures.at;
    const mib = (bytes: number) => Math.round((bytes / 1_048_576) * 100) / 100;
    return {
      from,
      at: figures.at,
      requests: this.requests.take(),
      commits: this.commits.take(),
      latencyP99Ms: this.requests.takeP99(),
      loopP99Ms: figures.eventLoopDelayMs.p99,
      loopMaxMs: figures.eventLoopDelayMs.max,
      rssMiB: mib(figures.memory.rss),
      heapMiB: mib(figures.memory.heapUsed),
    };
  }

  /** The notices it hears: every node's figures. */
  readonly hears = { 'node.figures': (notice: NodeFiguresNotice) => this.hear(notice.figures) };

  /** Another node's figures, as the bus brought them (checked: the bus is shared, not trusted to be well-formed). */
  hear(figures: unknown): void {
    const parsed = ToldFigures.safeParse(figures);
    if (!parsed.success || parsed.data.nodeId === this.nodeId) return;
    const { wants, history, ...heard } = parsed.data;
    this.history.heardFrom(heard.nodeId, heard.startedAt, {
      ...(heard.sample && { sample: heard.sample }),
      ...(wants && { wants }),
      ...(history && { history }),
    });
    if (!this.heard.has(heard.nodeId) && this.heard.size >= MAX_NODES) this.forgetStale();
    if (!this.heard.has(heard.nodeId) && this.heard.size >= MAX_NODES) return;
    // Figures are stamped with the receiving node's clock: nodes' clocks may disagree.
    this.heard.set(heard.nodeId, { ...heard, at: this.clock() });
  }

  /** Every node heard from in the last three rounds, this one first (fresh), the others by node id. */
  nodes(): { nodeId: string; self: boolean; heardAt: number; figures: NodeFigures }[] {
    this.forgetStale();
    const others = [...this.heard.values()].sort((a, b) => a.nodeId.localeCompare(b.nodeId));
    const { wants: _w, history: _h, ...self } = this.sample();
    return [
      { nodeId: self.nodeId, self: true, heardAt: self.at, figures: self },
      ...others.map((f) => ({ nodeId: f.nodeId, self: false, heardAt: f.at, figures: f })),
    ];
  }

  stop(): void {
    this.loop.disable();
  }

  private forgetStale(): void {
    const cutoff = this.clock() - STALE_AFTER_MS;
    for (const [id, f] of this.heard) if (f.at < cutoff) this.heard.delete(id);
  }
}
