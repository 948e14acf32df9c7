import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { sharingFlow } from './sharing-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  sharingFlow('mongo', mongoStore(uri!));
});
