import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { accountsFlow } from './accounts-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  accountsFlow('mongo', mongoStore(uri!));
});
