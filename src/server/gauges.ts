// The node's own figures (boards active, sockets, requests in flight...) for the operators' watch
// and /metrics. Both are made before the parts they count (the registry, the hub), since those
// report commits to them; they read the parts through here once `count` names them.
import type { NodeSources } from '../admin/utilization.js';
import type { BatchesReceived, Bus } from '../bus/bus.js';

export interface Counted {
  registry: { readonly size: number; readonly waiting: number; readonly leaseTimers: number };
  hub: { readonly size: number };
  inFlight(): number;
}

export class NodeGauges implements NodeSources {
  private counted: Counted | null = null;

  constructor(private readonly carrier: Pick<Bus, 'health' | 'received'>) {}

  /** Names the parts counted; until then every count is 0. */
  count(parts: Counted): void {
    this.counted = parts;
  }

  boardsActive = (): number => this.counted?.registry.size ?? 0;
  mailboxDepth = (): number => this.counted?.registry.waiting ?? 0;
  leaseTimers = (): number => this.counted?.registry.leaseTimers ?? 0;
  sockets = (): number => this.counted?.hub.size ?? 0;
  inFlight = (): number => this.counted?.inFlight() ?? 0;
  bus = (): 'local' | 'ok' | 'degraded' => this.carrier.health;
  busBatches = (): BatchesReceived => this.carrier.received;
}
