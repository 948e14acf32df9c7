// The console's alerts (Overview): what an operator on call should look at now, read from the
// durability report and the nodes' figures this node already holds. Each rule is one line here,
// with the threshold it fires at; nothing is read that the report did not read already.
import type { NodeFigures } from './utilization.js';

export interface Alert {
  level: 'critical' | 'warning';
  /** Stable, for a console or a pager to key on. */
  code: string;
  message: string;
}

/** What the rules read: the durability report's fields (src/admin/durability.ts), and each node's figures. */
export interface AlertInputs {
  at: number;
  store: {
    ping: { ok: boolean; ms: number; error?: string };
    commits: { failures: number; lastFailure: { at: number; error: string } | null };
    disk: { totalBytes: number; availableBytes: number } | { error: string } | null;
    replication: { error: string } | Record<string, unknown> | null;
  };
  retention: { at: number; error: string | null } | null;
  mail: { outbox: number | null };
  bus: { state: 'local' | 'ok' | 'degraded' };
  usageCounters: { dropped: number; lastFlush: { error: string | null } | null };
}

/** A commit failure this recent is still news. */
export const RECENT_MS = 15 * 60_000;
const SLOW_PING_MS = 500;
const DISK_WARN = 0.1;
const DISK_CRITICAL = 0.02;
const MAIL_BACKLOG = 100;
const LOOP_P99_MS = 250;
const RSS_BYTES = 1.5 * 1024 ** 3;

export function alertsOf(report: AlertInputs, nodes: readonly { nodeId: string; figures: NodeFigures }[]): Alert[] {
  const out: Alert[] = [];
  const add = (level: Alert['level'], code: string, message: string) => out.push({ level, code, message });
  const { store } = report;
  if (!store.ping.ok)
    add(
      'critical',
      'store.unreachable',
      `The store did not answer a ping (${store.ping.error ?? 'error'} after ${store.ping.ms} ms).`,
    );
  else if (store.ping.ms > SLOW_PING_MS)
    add('warning', 'store.slow', `The store took ${store.ping.ms} ms to answer a ping.`);
  const failure = store.commits.lastFailure;
  if (failure && report.at - failure.at < RECENT_MS)
    add(
      'warning',
      'commits.failing',
      `A board commit failed ${Math.round((report.at - failure.at) / 60_000)} min ago (${failure.error}); ${store.commits.failures} since this node started.`,
    );
  if (store.disk && 'availableBytes' in store.disk && store.disk.totalBytes > 0) {
    const share = store.disk.availableBytes / store.disk.totalBytes;
    if (share < DISK_CRITICAL)
      add('critical', 'disk.full', `The data directory's disk is ${(100 - share * 100).toFixed(1)}% full.`);
    else if (share < DISK_WARN)
      add('warning', 'disk.filling', `The data directory's disk is ${(100 - share * 100).toFixed(1)}% full.`);
  } else if (store.disk && 'error' in store.disk)
    add('warning', 'disk.unknown', `The data directory's disk could not be read (${store.disk.error}).`);
  if (store.replication && 'error' in store.replication)
    add(
      'warning',
      'replication.unknown',
      `The replica set's state could not be read (${String(store.replication.error)}).`,
    );
  if (report.retention?.error)
    add('warning', 'retention.failed', `The last retention purge failed (${report.retention.error}).`);
  if (report.bus.state === 'degraded')
    add(
      'critical',
      'bus.down',
      'The bus is down: other nodes do not hear this node’s commits, revocations or notices until it is back.',
    );
  if ((report.mail.outbox ?? 0) > MAIL_BACKLOG)
    add('warning', 'mail.backlog', `${report.mail.outbox} mails wait in the outbox.`);
  if (report.usageCounters.lastFlush?.error)
    add('warning', 'usage.flush', `Writing the usage counters failed (${report.usageCounters.lastFlush.error}).`);
  if (report.usageCounters.dropped > 0)
    add(
      'warning',
      'usage.dropped',
      `${report.usageCounters.dropped} usage counts were dropped: cost and abuse figures undercount.`,
    );
  for (const { nodeId, figures } of nodes) {
    if (figures.eventLoopDelayMs.p99 > LOOP_P99_MS)
      add(
        'warning',
        'node.loop',
        `Node ${nodeId}: event-loop delay p99 ${Math.round(figures.eventLoopDelayMs.p99)} ms.`,
      );
    if (figures.memory.rss > RSS_BYTES)
      add('warning', 'node.memory', `Node ${nodeId}: ${(figures.memory.rss / 1024 ** 3).toFixed(1)} GiB resident.`);
  }
  return out.sort((a, b) => (a.level === b.level ? 0 : a.level === 'critical' ? -1 : 1));
}
