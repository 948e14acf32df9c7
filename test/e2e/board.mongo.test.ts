import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { boardFlow } from './board-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  boardFlow('mongo', mongoStore(uri!));
});
