// The console's alerts, rule by rule: each fires at its threshold and not below it, critical first.
import { describe, expect, it } from 'vitest';
import { alertsOf, RECENT_MS, type AlertInputs } from '../../src/admin/alerts.js';
import type { NodeFigures } from '../../src/admin/utilization.js';

const AT = 1_800_000_000_000;
const healthy = (): AlertInputs => ({
  at: AT,
  store: {
    ping: { ok: true, ms: 3 },
    commits: { failures: 0, lastFailure: null },
    disk: { totalBytes: 100e9, availableBytes: 50e9 },
    replication: null,
  },
  retention: { at: AT - 1000, error: null },
  mail: { outbox: 0 },
  bus: { state: 'ok' },
  usageCounters: { dropped: 0, lastFlush: { error: null } },
});
const node = (nodeId: string, p99: number, rss: number) => ({
  nodeId,
  figures: {
    eventLoopDelayMs: { mean: 1, p99, max: p99 },
    memory: { rss, heapUsed: 0, heapTotal: 0, external: 0 },
  } as unknown as NodeFigures,
});
const codes = (report: AlertInputs, nodes: ReturnType<typeof node>[] = []) =>
  alertsOf(report, nodes).map((a) => `${a.level}:${a.code}`);

describe('alerts', () => {
  it('stays quiet on a healthy service', () => {
    expect(codes(healthy(), [node('a', 20, 200e6)])).toEqual([]);
  });

  it('names each problem at its threshold, critical ones first', () => {
    const r = healthy();
    r.store.ping = { ok: true, ms: 501 };
    r.store.commits = { failures: 2, lastFailure: { at: AT - RECENT_MS + 1000, error: 'StoreUnavailableError' } };
    r.store.disk = { totalBytes: 100, availableBytes: 9 };
    r.retention = { at: AT, error: 'StoreUnavailableError' };
    r.mail.outbox = 101;
    r.bus.state = 'degraded';
    r.usageCounters = { dropped: 3, lastFlush: { error: 'timeout' } };
    expect(codes(r, [node('a', 251, 200e6), node('b', 10, 2 * 1024 ** 3)])).toEqual([
      'critical:bus.down',
      'warning:store.slow',
      'warning:commits.failing',
      'warning:disk.filling',
      'warning:retention.failed',
      'warning:mail.backlog',
      'warning:usage.flush',
      'warning:usage.dropped',
      'warning:node.loop',
      'warning:node.memory',
    ]);
  });

  it('tells an unreachable store and a full disk as critical, an old commit failure as no news', () => {
    const r = healthy();
    r.store.ping = { ok: false, ms: 2000, error: 'timeout' };
    r.store.disk = { totalBytes: 100, availableBytes: 1 };
    r.store.commits = { failures: 1, lastFailure: { at: AT - RECENT_MS - 1, error: 'Error' } };
    r.store.replication = { error: 'timeout' };
    expect(codes(r)).toEqual(['critical:store.unreachable', 'critical:disk.full', 'warning:replication.unknown']);
    r.store.ping = { ok: true, ms: 500 };
    r.store.disk = { totalBytes: 100, availableBytes: 10 };
    r.store.replication = { members: 1 };
    expect(codes(r)).toEqual([]);
  });
});
