import { describe, inject } from 'vitest';
import { mongoStore } from '../../support/stores.js';
import { dataFlow } from './data-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  dataFlow('mongo', mongoStore(uri!));
});
