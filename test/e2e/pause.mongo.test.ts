import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { pauseFlow } from './pause-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  pauseFlow('mongo', mongoStore(uri!));
});
