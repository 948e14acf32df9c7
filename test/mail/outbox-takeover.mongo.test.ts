import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { outboxTakeover } from './outbox-takeover.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  outboxTakeover('mongo', mongoStore(uri!));
});
