import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { onboardingFlow } from './onboarding-flow.js';
import { claimRecoveryFlow } from './claim-recovery-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  onboardingFlow('mongo', mongoStore(uri!));
  claimRecoveryFlow('mongo', mongoStore(uri!));
});
