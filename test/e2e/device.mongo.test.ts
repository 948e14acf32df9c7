import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { deviceFlow } from './device-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  deviceFlow('mongo', mongoStore(uri!));
});
