import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { rewindFlow } from './rewind-flow.js';
import { rewindHistoryFlow } from './rewind-history-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  rewindFlow('mongo', mongoStore(uri!));
  rewindHistoryFlow('mongo', mongoStore(uri!));
});
