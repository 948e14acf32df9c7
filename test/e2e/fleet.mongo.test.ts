import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { fleetFlow } from './fleet-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  fleetFlow('mongo', mongoStore(uri!));
});
