// The fleets on the MongoDB-wire store: one node, then two server processes sharing it through
// Redis. One file, so these two heavy suites run one after the other rather than both at once
// against the same wire server.
import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { canRunRedis } from '../support/redis-server.js';
import { fleetFlow } from './fleet-flow.js';
import { nodesFlow } from './nodes-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  fleetFlow('mongo', mongoStore(uri!));
});

describe.skipIf(!uri || inject('redisUrl') === null || !canRunRedis)('mongo and redis', () => {
  nodesFlow(uri!);
});
