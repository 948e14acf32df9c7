// What a node tells about itself: the operators' watch (usage counters, node figures, commit
// timings through its store) and, with a metrics port, Prometheus metrics. Every write to what
// credentials and project selection read is told to every node here, for their identity caches.
import type { Logger } from 'pino';
import type { Store } from '../../store/ports/store.js';
import { Watch } from '../admin/watch.js';
import { recordChanges } from '../auth/identity-cache.js';
import type { Bus } from '../bus/bus.js';
import type { Config } from '../config.js';
import type { Mailer } from '../mail/mailer.js';
import { NodeMetrics } from '../metrics/metrics.js';
import type { NodeGauges } from './gauges.js';
import type { Notice } from './notices.js';

/** How long a readiness probe waits for the store's answer. */
const STORE_PING_MS = 2000;

export interface Watching {
  watch: Watch;
  /** The store as the node uses it: timed for the watch, its credential writes told to every node. */
  store: Store;
  /** Null without METRICS_PORT: requests then pay nothing for metrics. */
  metrics: NodeMetrics | null;
  storeAnswers(): Promise<boolean>;
}

export function watchNode(parts: {
  config: Config;
  store: Store;
  clock: () => number;
  logger: Logger;
  bus: Bus<Notice>;
  gauges: NodeGauges;
  mailer: Mailer;
}): Watching {
  const { config, clock, logger, bus, gauges, mailer } = parts;
  const watch = new Watch({
    nodeId: config.nodeId,
    store: parts.store,
    clock,
    logger,
    publish: (figures) => bus.notify({ kind: 'node.figures', figures }),
    sources: gauges,
  });
  const store = recordChanges(watch.store, (collection, ids) =>
    bus.notify({ kind: 'records.changed', collection, ids }),
  );
  const storeAnswers = async (): Promise<boolean> => {
    try {
      await Promise.race([
        store.ping(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), STORE_PING_MS).unref()),
      ]);
      return true;
    } catch {
      return false;
    }
  };
  const metrics = config.metrics
    ? new NodeMetrics({
        actors: gauges.boardsActive,
        mailboxes: gauges.mailboxDepth,
        leaseTimers: gauges.leaseTimers,
        sockets: gauges.sockets,
        inFlight: gauges.inFlight,
        bus: gauges.bus,
        busBatches: gauges.busBatches,
        storeUp: storeAnswers,
        mail: () => mailer.stats?.(),
      })
    : null;
  return { watch, store, metrics, storeAnswers };
}
