// GET /api/admin/utilization: what each node carries. Every node samples its own figures (boards
// active, sockets, requests and commits per minute, lease timers, mailbox depths, event-loop delay,
// memory) and tells the others through the bus every few seconds; the node asked lists what it
// heard recently beside its own figures, taken at the time of asking.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { z } from 'zod';

/** How often each node tells the others its figures; a node not heard from for three rounds is left out. */
export const FIGURES_EVERY_MS = 5_000;
const STALE_AFTER_MS = 3 * FIGURES_EVERY_MS;
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
});
export type NodeFigures = z.infer<typeof NodeFigures>;

/** A node's own figures, told every few seconds, for the operators' utilization view. */
export type NodeFiguresNotice = {
  kind: 'node.figures';
  figures: NodeFigures;
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
  readonly requests = new PerMinute();
  readonly commits = new PerMinute();
  private readonly heard = new Map<string, NodeFigures>();
  private readonly loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });

  constructor(
    private readonly nodeId: string,
    private readonly startedAt: number,
    private readonly sources: NodeSources,
    private readonly clock: () => number,
  ) {
    this.loop.enable();
  }

  /** This node's figures now; the event-loop delay is over the time since the last call that reset it. */
  sample(reset = false): NodeFigures {
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
    if (reset) this.loop.reset();
    return figures;
  }

  /** The notices it hears: every node's figures. */
  readonly hears = { 'node.figures': (notice: NodeFiguresNotice) => this.hear(notice.figures) };

  /** Another node's figures, as the bus brought them (checked: the bus is shared, not trusted to be well-formed). */
  hear(figures: unknown): void {
    const parsed = NodeFigures.safeParse(figures);
    if (!parsed.success || parsed.data.nodeId === this.nodeId) return;
    if (!this.heard.has(parsed.data.nodeId) && this.heard.size >= MAX_NODES) this.forgetStale();
    if (!this.heard.has(parsed.data.nodeId) && this.heard.size >= MAX_NODES) return;
    // Figures are stamped with the receiving node's clock: nodes' clocks may disagree.
    this.heard.set(parsed.data.nodeId, { ...parsed.data, at: this.clock() });
  }

  /** Every node heard from in the last three rounds, this one first (fresh), the others by node id. */
  nodes(): { nodeId: string; self: boolean; heardAt: number; figures: NodeFigures }[] {
    this.forgetStale();
    const others = [...this.heard.values()].sort((a, b) => a.nodeId.localeCompare(b.nodeId));
    const self = this.sample();
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
