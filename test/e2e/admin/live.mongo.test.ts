import { describe, inject } from 'vitest';
import { mongoStore } from '../../support/stores.js';
import { liveFlow } from './live-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  liveFlow('mongo', mongoStore(uri!));
});
