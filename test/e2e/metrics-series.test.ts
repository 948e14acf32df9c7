import { SCHEMA } from '../../store/ports/store.js';
import { planFor } from '../../store/embedded/plan.js';
import { embeddedStore } from '../support/stores.js';
import { metricsSeriesFlow } from './metrics-series-flow.js';

// The embedded store reads a filter by the plan planFor makes: an ordered range of an index, or a scan.
metricsSeriesFlow('embedded', embeddedStore, async ({ filter, options }) => {
  const plan = planFor(filter, SCHEMA.boardStatsDays, options);
  return plan.kind === 'index' && plan.ordered ? plan.index.name : null;
});
