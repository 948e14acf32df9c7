import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { onboardingFlow } from './onboarding-flow.js';
import { claimRecoveryFlow } from './claim-recovery-flow.js';
import { enrollmentRevokeFlow } from './enrollment-revoke-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  onboardingFlow('mongo', mongoStore(uri!));
  claimRecoveryFlow('mongo', mongoStore(uri!));
  enrollmentRevokeFlow('mongo', mongoStore(uri!));
});
