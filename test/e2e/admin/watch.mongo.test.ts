import { describe, inject } from 'vitest';
import { mongoStore } from '../../support/stores.js';
import { watchFlow } from './watch-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  watchFlow('mongo', mongoStore(uri!));
});
