import { describe, inject } from 'vitest';
import { mongoStore } from '../../support/stores.js';
import { doctrineDataFlow } from './doctrine-data-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  doctrineDataFlow('mongo', mongoStore(uri!));
});
