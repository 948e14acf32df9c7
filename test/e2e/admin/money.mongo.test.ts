import { describe, inject } from 'vitest';
import { mongoStore } from '../../support/stores.js';
import { moneyFlow } from './money-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  moneyFlow('mongo', mongoStore(uri!));
});
