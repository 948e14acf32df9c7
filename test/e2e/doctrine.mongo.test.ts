import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { doctrineFlow } from './doctrine-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  doctrineFlow('mongo', mongoStore(uri!));
});
