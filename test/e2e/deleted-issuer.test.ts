// One-time secrets an account made (enrollment codes, device approvals) once the account is deleted:
// its deletion removes them, and a redemption or poll that finds its maker deleted is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modify } from '../../store/ports/store.js';
import { expectError } from '../support/expect-error.js';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
beforeAll(async () => {
  // Everyone here signs up from one socket address.
  srv = await startTestServer({ ADDRESS_RATE_PER_MINUTE: '1000' });
});
afterAll(async () => {
  await srv.stop();
});

/** An admin (not the owner) of another person's board, with a code and a device approval made there. */
async function adminWithSecrets() {
  const owner = await signedUp(srv.url);
  const projectId = (await srv.store.accounts.get(owner.accountId))!.defaultProjectId!;
  const admin = await signedUp(srv.url);
  await srv.store.members.insert({
    _id: `${projectId}:${admin.accountId}`,
    version: 1,
    projectId,
    accountId: admin.accountId,
    role: 'admin',
    acceptedAt: Date.now(),
  });
  const code = await admin.client.post(`/api/projects/${projectId}/agents/enroll`, { uses: 5, ttlSeconds: 86_400 });
  expect(code.status, code.text).toBe(201);
  const device = await new Client(srv.url).post('/api/auth/device/start', { clientName: 'bot' });
  const approved = await admin.client.post('/api/auth/device/approve', {
    userCode: device.body.userCode,
    projectId,
    approve: true,
  });
  expect(approved.status, approved.text).toBe(200);
  return { admin, code: code.body.code as string, deviceCode: device.body.deviceCode as string };
}

const redeem = (code: string) => new Client(srv.url).post('/api/projects/enroll', { code, name: 'late-agent' });
const poll = (deviceCode: string) => new Client(srv.url).post('/api/auth/device/poll', { deviceCode });

describe('secrets a deleted account issued', () => {
  it('are revoked with the account: its code is refused, its approval denied', async () => {
    const { admin, code, deviceCode } = await adminWithSecrets();
    const deleted = await admin.client.request('DELETE', '/api/account', {
      json: { confirmEmail: admin.email, currentPassword: admin.password },
    });
    expect(deleted.status, deleted.text).toBe(204);
    // Kept, with no use left, until it would have expired (a redemption under way then finds it revoked).
    expect(await srv.store.enrollments.find({ createdBy: `user:${admin.accountId}` })).toEqual([
      expect.objectContaining({ usesLeft: 0 }),
    ]);
    expectError(await redeem(code), 400, 'INVALID_LINK_TOKEN');
    expectError(await poll(deviceCode), 400, 'ACCESS_DENIED');
  });

  it('mint nothing when the maker is found deleted at redemption or poll', async () => {
    const { admin, code, deviceCode } = await adminWithSecrets();
    // A deletion landing between the cleanup's read and the redemption: only the mark is there.
    await modify(srv.store.accounts, admin.accountId, () => ({ deletedAt: Date.now(), deletedBy: 'owner' as const }));
    expectError(await redeem(code), 400, 'INVALID_LINK_TOKEN');
    expectError(await poll(deviceCode), 400, 'ACCESS_DENIED');
    expect(await srv.store.tokens.count({ accountId: admin.accountId })).toBe(0);
  });
});
