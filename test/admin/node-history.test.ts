// The hour of node samples behind the Overview's charts: a fixed-size ring, and nodes that fill in
// what they missed (started late, or cut off) by asking the sender on their next figures.
import { describe, expect, it } from 'vitest';
import {
  columnsOf,
  gapsIn,
  NodeHistory,
  SampleColumns,
  SampleRing,
  type NodeSample,
} from '../../src/admin/node-history.js';
import { Utilization, type NodeSources } from '../../src/admin/utilization.js';

const sampleAt = (at: number, from = at - 5000, requests = at / 5000): NodeSample => ({
  from,
  at,
  requests,
  commits: requests % 7,
  latencyP99Ms: 1.25,
  loopP99Ms: 20.97,
  loopMaxMs: 120.52,
  rssMiB: 123.45,
  heapMiB: 45.67,
});

describe('SampleRing', () => {
  it('keeps the newest samples, oldest first, in a fixed number of bytes', () => {
    const ring = new SampleRing(720);
    const bytes = ring.bytes;
    expect(bytes).toBe(720 * 44);
    for (let k = 1; k <= 1000; k++) ring.add(sampleAt(k * 5000));
    expect(ring.size).toBe(720);
    expect(ring.bytes).toBe(bytes);
    const held = ring.samples();
    expect(held[0]!.at).toBe(281 * 5000);
    expect(held.at(-1)).toEqual(sampleAt(1000 * 5000)); // two decimals read back as written
    expect(ring.samples(999 * 5000).map((s) => s.at)).toEqual([1000 * 5000]);
  });

  it('merges late samples into place, one per time, and still keeps only the newest', () => {
    const ring = new SampleRing(4);
    for (const k of [1, 2, 5, 6]) ring.add(sampleAt(k * 5000));
    ring.merge([sampleAt(3 * 5000), sampleAt(4 * 5000), sampleAt(5 * 5000, 0, 99)]);
    expect(ring.samples().map((s) => s.at / 5000)).toEqual([3, 4, 5, 6]);
    expect(ring.samples()[2]!.requests).toBe(5); // one already held at that time is kept (a node's sample never changes)
    ring.add(sampleAt(2 * 5000)); // older than everything kept: it falls off again
    expect(ring.samples().map((s) => s.at / 5000)).toEqual([3, 4, 5, 6]);
  });

  it('names the gaps between samples that do not meet', () => {
    const samples = [sampleAt(5000), sampleAt(10_000), sampleAt(30_000), sampleAt(35_000)];
    expect(gapsIn(samples)).toEqual([{ from: 10_000, to: 25_000 }]);
    const columns = columnsOf(samples);
    expect(SampleColumns.safeParse(columns).success).toBe(true);
    expect(SampleColumns.safeParse({ ...columns, requests: [1] }).success).toBe(false);
  });
});

/** Nodes on a shared bus that delivers each node's news to every other, unless a node is cut off. */
function fleet(ids: string[]) {
  let now = 1_000_000;
  const clock = () => now;
  const nodes = new Map(ids.map((id) => [id, new NodeHistory(id, 720, clock)]));
  const startedAt = new Map(ids.map((id) => [id, now - 5000]));
  const cut = new Set<string>();
  const rounds = new Map(ids.map((id) => [id, 0]));
  /** Every node takes a sample and tells the others. */
  const round = () => {
    now += 5000;
    for (const [id, node] of nodes) {
      const news = node.recorded(sampleAt(now, now - 5000, (rounds.get(id) ?? 0) + 1));
      rounds.set(id, (rounds.get(id) ?? 0) + 1);
      for (const [other, hearer] of nodes)
        if (other !== id && !cut.has(other) && !cut.has(id)) hearer.heardFrom(id, startedAt.get(id)!, news);
    }
  };
  const of = (id: string, about: string) =>
    nodes
      .get(id)!
      .window(3_600_000)
      .find((n) => n.nodeId === about)!;
  const join = (id: string) => {
    nodes.set(id, new NodeHistory(id, 720, clock));
    startedAt.set(id, now);
  };
  return { nodes, round, of, cut, startedAt, join };
}

describe('NodeHistory across nodes', () => {
  it('a node that starts late fills in the others’ earlier samples', () => {
    const f = fleet(['a', 'b']);
    for (let i = 0; i < 10; i++) f.round();
    f.join('c');
    f.round(); // c hears a sample whose interval began before anything it holds: it asks
    expect(f.of('c', 'a').samples).toHaveLength(1);
    f.round(); // c's figures carry the ask; a and b hear it
    f.round(); // a and b answer on their next figures
    expect(f.of('c', 'a').samples).toEqual(f.of('a', 'a').samples);
    expect(f.of('c', 'b').samples).toEqual(f.of('b', 'b').samples);
    expect(gapsIn(f.of('c', 'a').samples)).toEqual([]);
  });

  it('a node cut off for a while asks for what it missed; what none can answer stays a gap', () => {
    const f = fleet(['a', 'b']);
    for (let i = 0; i < 5; i++) f.round();
    f.cut.add('b');
    for (let i = 0; i < 4; i++) f.round();
    const [missedFrom, missedTo] = [f.of('b', 'a').samples.at(-1)!.at, f.of('a', 'a').samples.at(-1)!.at];
    f.cut.delete('b');
    f.round();
    expect(gapsIn(f.of('b', 'a').samples)).toEqual([{ from: missedFrom, to: missedTo }]);
    f.round();
    f.round();
    expect(gapsIn(f.of('b', 'a').samples)).toEqual([]);
    expect(f.of('b', 'a').samples).toEqual(f.of('a', 'a').samples);

    // A restart loses the node's own memory: nothing to ask for, and the downtime is a gap.
    const before = f.of('b', 'a').samples.at(-1)!.at;
    f.cut.add('a');
    f.round();
    f.round();
    f.cut.delete('a');
    f.join('a');
    f.round();
    f.round();
    const gaps = gapsIn(f.of('b', 'a').samples);
    expect(gaps).toEqual([{ from: before, to: f.startedAt.get('a') }]); // its first sample began at its start
  });

  it('forgets a node not heard from for an hour, and holds at most its bound of nodes', () => {
    let now = 0;
    const h = new NodeHistory('me', 720, () => now, 2);
    for (const id of ['x', 'y', 'z']) h.heardFrom(id, 0, { sample: sampleAt(now + 5000, now) });
    expect(h.window(3_600_000).map((n) => n.nodeId)).toEqual(['me', 'x', 'y']);
    now += 3_600_001;
    expect(h.window(3_600_000).map((n) => n.nodeId)).toEqual(['me']);
  });
});

describe('Utilization rounds', () => {
  const sources: NodeSources = {
    boardsActive: () => 0,
    sockets: () => 0,
    inFlight: () => 0,
    leaseTimers: () => 0,
    mailboxDepth: () => 0,
    bus: () => 'local',
  };

  it('samples each round’s requests, commits and p99 latency, and sends the sample with its figures', () => {
    let now = 1_000_000;
    const u = new Utilization('me', now, sources, () => now);
    try {
      expect(u.sample(true).sample).toBeUndefined(); // told at start: too short a round
      for (let i = 0; i < 100; i++) {
        const started = now;
        now += i === 99 ? 250 : 2; // one slow request among a hundred
        u.requests.add(started);
      }
      u.commits.add(now, 3);
      now = 1_005_000;
      const told = u.sample(true);
      expect(told.sample).toMatchObject({ from: 1_000_000, at: 1_005_000, requests: 100, commits: 3 });
      expect(told.sample!.latencyP99Ms).toBe(250);
      expect(told.sample!.rssMiB).toBeGreaterThan(10);
      expect(told.requestsPerMinute).toBe(100);
      now = 1_010_000;
      expect(u.sample(true).sample).toMatchObject({ from: 1_005_000, requests: 0, commits: 0, latencyP99Ms: 0 });
      expect(u.history.window(3_600_000)[0]!.samples).toHaveLength(2);
      // Asked (not a round): the last sample, and no asks or answers.
      expect(Object.keys(u.nodes()[0]!.figures)).not.toContain('wants');
      expect(u.nodes()[0]!.figures.sample!.at).toBe(1_010_000);
    } finally {
      u.stop();
    }
  });

  it('hears a node’s sample with its figures, and ignores figures that are not well-formed', () => {
    let now = 1_000_000;
    const a = new Utilization('a', now, sources, () => now);
    const b = new Utilization('b', now, sources, () => now);
    try {
      now += 5000;
      const told = a.sample(true);
      b.hear(told);
      b.hear({ ...told, nodeId: 'c', history: { at: [1], from: [] } });
      const heard = b.history.window(3_600_000);
      expect(heard.map((n) => n.nodeId)).toEqual(['b', 'a']);
      expect(heard[1]!.samples).toEqual([told.sample]);
      expect(Object.keys(b.nodes()[1]!.figures)).not.toContain('wants');
    } finally {
      a.stop();
      b.stop();
    }
  });
});
