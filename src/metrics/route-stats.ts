// Request counts and latencies by route, kept in plain numbers on the request path and turned into
// Prometheus families only when scraped. prom-client's own label children cost about half a
// microsecond per increment (a label hash each time); these cost a map lookup and an add.
import type { Metric, Registry } from 'prom-client';

interface RouteSeries {
  statuses: Map<number, number>;
  /** Observations per bucket (not cumulative), the last one past every bound. */
  buckets: Float64Array;
  count: number;
  sum: number;
}

export class RouteStats {
  private readonly routes = new Map<string, RouteSeries>();

  constructor(readonly bounds: readonly number[]) {}

  record(route: string, status: number, seconds: number): void {
    let series = this.routes.get(route);
    if (!series)
      this.routes.set(
        route,
        (series = { statuses: new Map(), buckets: new Float64Array(this.bounds.length + 1), count: 0, sum: 0 }),
      );
    series.statuses.set(status, (series.statuses.get(status) ?? 0) + 1);
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++;
    series.buckets[i]!++;
    series.count++;
    series.sum += seconds;
  }

  /** Responses of `route` with `status` so far. */
  count(route: string, status: number): number {
    return this.routes.get(route)?.statuses.get(status) ?? 0;
  }

  entries(): IterableIterator<[string, RouteSeries]> {
    return this.routes.entries();
  }
}

interface Sample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * Registers a family read from `samples()` at each scrape. The registry formats any object with
 * name, help, type and an async get() (what its own metric classes provide); prom-client's
 * typings name only its classes, hence the cast.
 */
export function registerFamily(
  registry: Registry,
  name: string,
  help: string,
  type: 'counter' | 'histogram',
  samples: () => Sample[],
): void {
  const family = {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }),
  };
  registry.registerMetric(family as unknown as Metric);
}

/** The Prometheus histogram series of every route (cumulative buckets, +Inf, sum, count). */
export function histogramSamples(stats: RouteStats, name: string): Sample[] {
  const out: Sample[] = [];
  for (const [route, series] of stats.entries()) {
    let cumulative = 0;
    stats.bounds.forEach((le, i) => {
      cumulative += series.buckets[i]!;
      out.push({ metricName: `${name}_bucket`, labels: { le, route }, value: cumulative });
    });
    out.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', route }, value: series.count });
    out.push({ metricName: `${name}_sum`, labels: { route }, value: series.sum });
    out.push({ metricName: `${name}_count`, labels: { route }, value: series.count });
  }
  return out;
}

/** Responses by route and status, optionally only some statuses. */
export function countSamples(
  stats: RouteStats,
  name: string,
  keep: (status: number) => boolean = () => true,
  withStatus = true,
): Sample[] {
  const out: Sample[] = [];
  for (const [route, series] of stats.entries()) {
    for (const [status, n] of series.statuses)
      if (keep(status)) out.push({ metricName: name, labels: withStatus ? { route, status } : { route }, value: n });
  }
  return out;
}
