// The last hour of every node's figures at five-second resolution, for the operators' Overview
// charts. A node samples itself each time it tells its figures (src/admin/utilization.ts) and sends
// the new sample with them; every node keeps a fixed-size ring per node it hears. A node that has
// none of a sender's samples yet, or hears one whose interval does not begin where the last one it
// holds ended (it was cut off), asks the sender for what it missed on its own next figures; the
// sender answers on its next ones (every node merges the answer). What nobody could fill in is a gap.
import { z } from 'zod';

const int = z.number().int().min(0);
const value = z.number().min(0).max(1e9);

/** One interval of a node's life, as that node measured it (times are its own clock, epoch ms). */
export const NodeSample = z.object({
  /** Where the interval began: the previous sample's `at`, or the node's start. */
  from: int,
  at: int,
  /** Requests answered in the interval. */
  requests: int,
  /** Board commits in the interval. */
  commits: int,
  /** The answered requests' 99th percentile, start to response (0 without any). */
  latencyP99Ms: value,
  /** Event-loop delay over the interval (20 ms resolution): its 99th percentile and its maximum. */
  loopP99Ms: value,
  loopMaxMs: value,
  /** Resident set and V8 heap used at the end of the interval, in MiB (2^20 bytes). */
  rssMiB: value,
  heapMiB: value,
});
export type NodeSample = z.infer<typeof NodeSample>;

const FIELDS = [
  'from',
  'at',
  'requests',
  'commits',
  'latencyP99Ms',
  'loopP99Ms',
  'loopMaxMs',
  'rssMiB',
  'heapMiB',
] as const;
type Field = (typeof FIELDS)[number];

/** Samples column by column (one array per field, oldest first): compact on the bus, and what a chart draws. */
export const SampleColumns = z
  .object(
    Object.fromEntries(FIELDS.map((f) => [f, z.array(NodeSample.shape[f]).max(10_000)])) as {
      [F in Field]: z.ZodArray<(typeof NodeSample.shape)[F]>;
    },
  )
  .refine((c) => FIELDS.every((f) => c[f].length === c.at.length), 'every column as long as `at`');
export type SampleColumns = z.infer<typeof SampleColumns>;

/** A fixed number of samples in typed arrays, oldest overwritten: 44 bytes a sample. */
export class SampleRing {
  private readonly cols: Record<Field, Float64Array | Float32Array | Uint32Array>;
  private start = 0;
  private held = 0;

  constructor(readonly capacity: number) {
    const times = () => new Float64Array(capacity);
    const counts = () => new Uint32Array(capacity);
    const values = () => new Float32Array(capacity);
    this.cols = {
      ...{ from: times(), at: times(), requests: counts(), commits: counts() },
      ...{ latencyP99Ms: values(), loopP99Ms: values(), loopMaxMs: values(), rssMiB: values(), heapMiB: values() },
    };
  }

  get size(): number {
    return this.held;
  }

  /** What the typed arrays take. */
  get bytes(): number {
    return FIELDS.reduce((n, f) => n + this.cols[f].byteLength, 0);
  }

  get last(): NodeSample | null {
    return this.held ? this.read((this.start + this.held - 1) % this.capacity) : null;
  }

  /** Adds a sample: appended when it is the newest, else merged in its place (one already held at its time is kept). */
  add(sample: NodeSample): void {
    const last = this.last;
    if (!last || sample.at > last.at) this.append(sample);
    else this.merge([sample]);
  }

  /** Adds samples in any order: sorted by time, one per `at`, the newest `capacity` kept. */
  merge(samples: readonly NodeSample[]): void {
    const byAt = new Map<number, NodeSample>();
    for (const s of [...samples, ...this.samples()]) byAt.set(s.at, s);
    const all = [...byAt.values()].sort((a, b) => a.at - b.at).slice(-this.capacity);
    this.start = 0;
    this.held = 0;
    for (const s of all) this.append(s);
  }

  /** The samples held that end after `after`, oldest first. */
  samples(after = -Infinity): NodeSample[] {
    const out: NodeSample[] = [];
    for (let k = 0; k < this.held; k++) {
      const i = (this.start + k) % this.capacity;
      if (this.cols.at[i]! > after) out.push(this.read(i));
    }
    return out;
  }

  private append(s: NodeSample): void {
    const i = (this.start + this.held) % this.capacity;
    for (const f of FIELDS) this.cols[f][i] = s[f];
    if (this.held < this.capacity) this.held++;
    else this.start = (this.start + 1) % this.capacity;
  }

  private read(i: number): NodeSample {
    // Float32 holds two decimals to within its precision: rounded back, they read as they were written.
    const v = (f: Field) => Math.round(this.cols[f][i]! * 100) / 100;
    return Object.fromEntries(FIELDS.map((f) => [f, v(f)])) as NodeSample;
  }
}

export function columnsOf(samples: readonly NodeSample[]): SampleColumns {
  return Object.fromEntries(FIELDS.map((f) => [f, samples.map((s) => s[f])])) as SampleColumns;
}

export function samplesOf(columns: SampleColumns): NodeSample[] {
  return columns.at.map((_, i) => Object.fromEntries(FIELDS.map((f) => [f, columns[f][i]!])) as NodeSample);
}

/** Where samples are missing: between two held samples, from the earlier's end to the later's start. */
export function gapsIn(samples: readonly NodeSample[]): { from: number; to: number }[] {
  const gaps: { from: number; to: number }[] = [];
  for (let i = 1; i < samples.length; i++)
    if (samples[i]!.from > samples[i - 1]!.at) gaps.push({ from: samples[i - 1]!.at, to: samples[i]!.from });
  return gaps;
}

/** What a node sends with its figures about the history: its new sample, what it asks others for, what it owes. */
export interface HistoryNews {
  sample?: NodeSample;
  /** Senders this node asks to send their samples after `after` (it holds none of theirs after it). */
  wants?: { nodeId: string; after: number }[];
  /** This node's own samples, answering another's `wants`. */
  history?: SampleColumns;
}

/** Of another node, an hour without a word: its ring is dropped. */
const FORGET_AFTER_MS = 3_600_000;
/** A node asks the same sender again at most this often, so an answer lost on the bus costs one more ask, not a storm. */
const ASK_EVERY_MS = 30_000;

interface Heard {
  ring: SampleRing;
  heardAt: number;
  askedAt: number;
}

/** This node's samples and those it heard, per node. */
export class NodeHistory {
  private readonly own: SampleRing;
  private readonly heard = new Map<string, Heard>();
  private wants = new Map<string, number>();
  /** The earliest `after` another node asked this one for since its last answer. */
  private owed: number | null = null;

  constructor(
    private readonly nodeId: string,
    private readonly capacity: number,
    private readonly clock: () => number,
    private readonly maxNodes = 256,
  ) {
    this.own = new SampleRing(capacity);
  }

  get last(): NodeSample | null {
    return this.own.last;
  }

  /** This node's new sample (null when it took none this round), and the news to send with it. */
  recorded(sample: NodeSample | null): HistoryNews {
    const news: HistoryNews = {};
    if (sample) {
      this.own.add(sample);
      news.sample = sample;
    }
    if (this.wants.size) news.wants = [...this.wants].map(([nodeId, after]) => ({ nodeId, after }));
    if (this.owed !== null) news.history = columnsOf(this.own.samples(this.owed));
    this.wants = new Map();
    this.owed = null;
    return news;
  }

  /** What another node sent (already checked against the schema); `startedAt` tells a restart from a cut. */
  heardFrom(nodeId: string, startedAt: number, news: HistoryNews): void {
    if (nodeId === this.nodeId) return;
    const now = this.clock();
    for (const w of news.wants ?? [])
      if (w.nodeId === this.nodeId) this.owed = Math.min(this.owed ?? Infinity, w.after);
    if (!news.sample && !news.history) return;
    const held = this.ringOf(nodeId, now);
    if (!held) return;
    held.heardAt = now;
    if (news.history) held.ring.merge(samplesOf(news.history));
    const s = news.sample;
    if (!s) return;
    const lastAt = held.ring.last?.at ?? -1;
    // Missed: the interval began after the last one held ended, and not at the sender's start (a restart loses nothing to ask for).
    if (s.from > lastAt && s.from > startedAt && now - held.askedAt >= ASK_EVERY_MS) {
      held.askedAt = now;
      this.wants.set(nodeId, Math.max(lastAt, 0));
    }
    held.ring.add(s);
  }

  /** Per node, this one first then by id: the samples that ended in the last `ms`, and the gaps between them. */
  window(ms: number): { nodeId: string; self: boolean; heardAt: number; samples: NodeSample[] }[] {
    const now = this.clock();
    this.forget(now);
    const after = now - ms;
    const others = [...this.heard].sort(([a], [b]) => a.localeCompare(b));
    return [
      { nodeId: this.nodeId, self: true, heardAt: now, samples: this.own.samples(after) },
      ...others.map(([nodeId, h]) => ({ nodeId, self: false, heardAt: h.heardAt, samples: h.ring.samples(after) })),
    ];
  }

  private ringOf(nodeId: string, now: number): Heard | null {
    let held = this.heard.get(nodeId);
    if (held) return held;
    if (this.heard.size >= this.maxNodes) this.forget(now);
    if (this.heard.size >= this.maxNodes) return null;
    held = { ring: new SampleRing(this.capacity), heardAt: now, askedAt: -Infinity };
    this.heard.set(nodeId, held);
    return held;
  }

  private forget(now: number): void {
    for (const [id, h] of this.heard) if (now - h.heardAt > FORGET_AFTER_MS) this.heard.delete(id);
  }
}
