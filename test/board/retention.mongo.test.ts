import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { retentionFlow } from './retention-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  retentionFlow('mongo', mongoStore(uri!));
});
