// Agent onboarding on the embedded store (and claims under failure), and the per-address budget of its credential-free operations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedStore } from '../support/stores.js';
import { expectError } from '../support/expect-error.js';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { onboardingFlow } from './onboarding-flow.js';
import { claimRecoveryFlow } from './claim-recovery-flow.js';
import { enrollmentRevokeFlow } from './enrollment-revoke-flow.js';

onboardingFlow('embedded', embeddedStore);
claimRecoveryFlow('embedded', embeddedStore);
enrollmentRevokeFlow('embedded', embeddedStore);

describe('the per-address budget of enrollment and anonymous provisioning', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ ADDRESS_RATE_PER_MINUTE: '4' });
  });
  afterAll(async () => {
    await srv.stop();
  });

  it('refuses anon-provision and enroll past the budget with 429 RATE_LIMITED and Retry-After, creating nothing', async () => {
    srv.holdBudgets();
    const { client: owner } = await signedUp(srv.url); // 1
    const projectId = (await owner.get('/api/projects')).body.projects[0].projectId as string;
    const code = (await owner.post(`/api/projects/${projectId}/agents/enroll`, { uses: 5, ttlSeconds: 600 })).body
      .code as string;
    const anon = new Client(srv.url);
    expect((await anon.post('/api/accounts/anon-provision')).status).toBe(201); // 2
    expect((await anon.post('/api/projects/enroll', { code, name: 'one' })).status).toBe(201); // 3
    expect((await anon.post('/api/boards/enroll', { code, name: 'two' })).status).toBe(201); // 4
    const accounts = await srv.store.anonymousAccounts.count({});
    const denied = await anon.post('/api/accounts/anon-provision', { projectName: 'one too many' });
    expectError(denied, 429, 'RATE_LIMITED');
    expect(Number(denied.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expectError(await anon.post('/api/projects/enroll', { code, name: 'three' }), 429, 'RATE_LIMITED');
    expect(await srv.store.anonymousAccounts.count({})).toBe(accounts);
    expect(await srv.store.tokens.count({ name: 'three' })).toBe(0);
    srv.advance(60_000);
    expect((await anon.post('/api/projects/enroll', { code, name: 'three' })).status).toBe(201);
  });
});
