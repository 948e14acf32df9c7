// The reconcile pass's totals on this node's /metrics registry, read at each scrape.
import { Counter, type Registry } from 'prom-client';
import type { BillingReconciler, ReconcileCounts } from './reconcile.js';

const OUTCOMES: Record<Exclude<keyof ReconcileCounts, 'candidates'>, string> = {
  reread: 'reread',
  changed: 'changed',
  planChanged: 'plan_changed',
  conflicts: 'conflict',
  failed: 'failed',
  deferred: 'deferred',
};

export function registerReconcileMetrics(registry: Registry, reconciler: Pick<BillingReconciler, 'totals'>): void {
  new Counter({
    name: 'board_billing_reconcile_passes_total',
    help: 'Billing reconcile passes this node ran.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(reconciler.totals.passes);
    },
  });
  new Counter({
    name: 'board_billing_reconcile_records_total',
    help: 'Billing records the reconcile pass handled, by outcome: reread (a provider call), changed, plan_changed, conflict, failed, deferred (left for the next pass).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [key, outcome] of Object.entries(OUTCOMES))
        this.inc({ outcome }, reconciler.totals[key as keyof typeof OUTCOMES]);
    },
  });
}
