import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { feedbackFlow } from './feedback-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  feedbackFlow('mongo', mongoStore(uri!));
});
