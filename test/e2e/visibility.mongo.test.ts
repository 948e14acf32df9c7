import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { visibilityFlow } from './visibility-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  visibilityFlow('mongo', mongoStore(uri!));
});
