// What an operator's monitoring scrapes from a node, in prom-client's Prometheus registry (one per
// node, never the process-global one: a test process may run several nodes). Request counts and
// latencies are kept in plain numbers as they happen (src/metrics/route-stats.ts: a request costs
// a few map lookups and adds); everything else (actors, sockets, bus, store, mail) is read only
// when scraped.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BatchesReceived } from '../bus/bus.js';
import type { MailStats } from '../mail/mailer.js';
import { countSamples, histogramSamples, registerFamily, RouteStats } from './route-stats.js';

export interface MetricSources {
  /** Board actors active on this node. */
  actors(): number;
  /** Commands waiting in this node's board actors' mailboxes. */
  mailboxes(): number;
  /** Boards with a lease expiry timer armed on this node. */
  leaseTimers(): number;
  /** WebSocket connections open on this node. */
  sockets(): number;
  /** Requests accepted and not yet answered. */
  inFlight(): number;
  bus(): 'local' | 'ok' | 'degraded';
  /** Other nodes' committed batches this node's bus received, read and skipped. */
  busBatches(): BatchesReceived;
  /** Whether the store answers a ping (bounded by a timeout). */
  storeUp(): Promise<boolean>;
  mail(): MailStats | undefined;
}

/** The operation label of a request no route took (404, 405, 413, draining). */
export const UNMATCHED = 'unmatched';
const BUS_STATES = ['local', 'ok', 'degraded'] as const;

export class NodeMetrics {
  readonly registry = new Registry();
  private readonly routes = new RouteStats([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]);
  private readonly commits: Counter;
  private readonly commitEvents: Histogram;
  private readonly expiries: Counter;
  private readonly warnings: Counter;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const routes = this.routes;
    registerFamily(
      this.registry,
      'board_http_requests_total',
      'HTTP responses by route (operation) and status.',
      'counter',
      () => countSamples(routes, 'board_http_requests_total'),
    );
    registerFamily(
      this.registry,
      'board_http_request_duration_seconds',
      'Time from a request read to its response, by route.',
      'histogram',
      () => histogramSamples(routes, 'board_http_request_duration_seconds'),
    );
    registerFamily(
      this.registry,
      'board_rate_limit_refusals_total',
      'Requests refused with 429 (a rate budget, or a mail budget), by route.',
      'counter',
      () => countSamples(routes, 'board_rate_limit_refusals_total', (status) => status === 429, false),
    );
    this.commits = new Counter({
      name: 'board_commits_total',
      help: 'Board commits made by this node’s actors (each a batch of commands).',
      registers,
    });
    this.commitEvents = new Histogram({
      name: 'board_commit_events',
      help: 'Events per board commit (how many commands a group commit carried shows here).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers,
    });
    this.expiries = new Counter({
      name: 'board_lease_expiries_total',
      help: 'Leases expired by this node’s timers (committed lease.expired events).',
      registers,
    });
    this.warnings = new Counter({
      name: 'board_lease_warnings_total',
      help: 'Lease warnings (20% of the lease left) told to holders.',
      registers,
    });
    gauge(this.registry, 'board_actors_active', 'Board actors active on this node.', sources.actors);
    gauge(
      this.registry,
      'board_mailbox_waiting',
      'Commands waiting in this node’s board actors’ mailboxes, behind the commits under way.',
      sources.mailboxes,
    );
    gauge(
      this.registry,
      'board_lease_timers',
      'Boards with a lease expiry timer armed on this node.',
      sources.leaseTimers,
    );
    gauge(this.registry, 'board_sockets_open', 'WebSocket connections open on this node.', sources.sockets);
    gauge(this.registry, 'board_http_in_flight', 'Requests accepted and not yet answered.', sources.inFlight);
    new Gauge({
      name: 'board_bus_state',
      help: 'The event bus: 1 for its current state (local: one node; ok: Redis; degraded: Redis unavailable).',
      labelNames: ['state'],
      registers,
      collect() {
        const now = sources.bus();
        for (const state of BUS_STATES) this.set({ state }, state === now ? 1 : 0);
      },
    });
    registerFamily(
      this.registry,
      'board_bus_batches_total',
      'Other nodes’ committed batches this node received: read (a board loaded here, or watched by a socket here) or skipped unread.',
      'counter',
      () => {
        const { read, skipped } = sources.busBatches();
        return [
          { metricName: 'board_bus_batches_total', labels: { fate: 'read' }, value: read },
          { metricName: 'board_bus_batches_total', labels: { fate: 'skipped' }, value: skipped },
        ];
      },
    );
    new Gauge({
      name: 'board_store_up',
      help: 'Whether the store answered a ping at this scrape (1) or not (0).',
      registers,
      async collect() {
        this.set((await sources.storeUp()) ? 1 : 0);
      },
    });
    gauge(
      this.registry,
      'board_mail_queued',
      'Mail this node holds: being sent, or waiting for its next attempt (the rest of the outbox is with other nodes).',
      () => sources.mail()?.queued ?? 0,
    );
    mailCounter(
      this.registry,
      'board_mail_sent_total',
      'Mail handed to the transport successfully.',
      () => sources.mail()?.sent ?? 0,
    );
    mailCounter(
      this.registry,
      'board_mail_retries_total',
      'Mail attempts that failed and were scheduled again.',
      () => sources.mail()?.retried ?? 0,
    );
    mailCounter(
      this.registry,
      'board_mail_failed_total',
      'Mail given up (refused permanently, or attempts exhausted); each is logged at error level.',
      () => sources.mail()?.failed ?? 0,
    );
  }

  /** One response: its route (null before any route took it), status and duration. */
  request(operation: string | null, status: number, seconds: number): void {
    this.routes.record(operation ?? UNMATCHED, status, seconds);
  }

  /** A board commit made by this node, with the events it appended. */
  committed(events: readonly { type: string }[]): void {
    this.commits.inc();
    this.commitEvents.observe(events.length);
    let expired = 0;
    for (const e of events) if (e.type === 'lease.expired') expired++;
    if (expired) this.expiries.inc(expired);
  }

  leaseWarning(): void {
    this.warnings.inc();
  }
}

function gauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** A total kept elsewhere (the mail queue counts its own), exposed as a counter at each scrape. */
function mailCounter(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}
