import { describe, inject } from 'vitest';
import { mongoStore } from '../../support/stores.js';
import { peopleFlow } from './people-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  peopleFlow('mongo', mongoStore(uri!));
});
