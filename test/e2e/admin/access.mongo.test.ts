import { describe, inject } from 'vitest';
import { mongoStore } from '../../support/stores.js';
import { accessFlow } from './access-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  accessFlow('mongo', mongoStore(uri!));
});
