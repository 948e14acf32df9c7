import { describe, inject } from 'vitest';
import { mongoStore } from '../../support/stores.js';
import { adminFeedbackFlow } from './feedback-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  adminFeedbackFlow('mongo', mongoStore(uri!));
});
