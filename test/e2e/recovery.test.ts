// Mailed single-use links over real HTTP: forgot/reset password and email verification.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CaptureMailer, Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';
import { unique } from '../support/temp.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

const resetLink = async (email: string) => {
  const mail = await srv.mail.next(email, /Reset/);
  expect(mail.text).toContain('http://board.test/reset-password#token=');
  return CaptureMailer.tokenOf(mail);
};

describe('forgot and reset password', () => {
  it('answers forgot-password the same whether or not the email exists, and mails only a known one', async () => {
    const user = await signedUp(srv.url);
    const c = new Client(srv.url);
    const known = await c.post('/api/auth/forgot-password', { email: user.email.toUpperCase() });
    const unknown = await c.post('/api/auth/forgot-password', { email: `${unique('ghost')}@example.com` });
    expect([known.status, unknown.status]).toEqual([202, 202]);
    expect(known.body).toEqual(unknown.body);
    await resetLink(user.email);
    expect(srv.mail.sent.some((m) => m.to.startsWith('ghost_'))).toBe(false);
    const stored = await srv.store.linkTokens.find({ accountId: user.accountId, purpose: 'reset-password' });
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(await resetLink(user.email));
  });

  it('resets once: the new password works, every session is revoked, the link is then spent', async () => {
    const user = await signedUp(srv.url);
    await new Client(srv.url).post('/api/auth/forgot-password', { email: user.email });
    const token = await resetLink(user.email);
    expectError(
      await new Client(srv.url).post('/api/auth/reset-password', { token, newPassword: 'short' }),
      400,
      'INVALID_PASSWORD',
    );
    const results = await Promise.all(
      [1, 2, 3].map(() =>
        new Client(srv.url).post('/api/auth/reset-password', { token, newPassword: 'brand new password 1' }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([204, 400, 400]);
    for (const r of results.filter((r) => r.status === 400)) expectError(r, 400, 'INVALID_LINK_TOKEN');
    expectError(await user.client.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    expectError(
      await new Client(srv.url).post('/api/auth/login', { email: user.email, password: user.password }),
      401,
      'INVALID_CREDENTIALS',
    );
    expect(
      (await new Client(srv.url).post('/api/auth/login', { email: user.email, password: 'brand new password 1' }))
        .status,
    ).toBe(200);
  });

  it('voids a reset link sent to an address the account has since left', async () => {
    const user = await signedUp(srv.url);
    await new Client(srv.url).post('/api/auth/forgot-password', { email: user.email });
    const token = await resetLink(user.email);
    const moved = await user.client.post('/api/account/email', {
      currentPassword: user.password,
      newEmail: `${unique('moved')}@example.com`,
    });
    expect(moved.status, moved.text).toBe(200);
    expectError(
      await new Client(srv.url).post('/api/auth/reset-password', { token, newPassword: 'brand new password 1' }),
      400,
      'INVALID_LINK_TOKEN',
    );
    const stored = await srv.store.accounts.get(user.accountId);
    expect(
      (await new Client(srv.url).post('/api/auth/login', { email: stored!.email, password: user.password })).status,
    ).toBe(200);
  });

  it('refuses an unknown token and an expired one', async () => {
    const user = await signedUp(srv.url);
    expectError(
      await new Client(srv.url).post('/api/auth/reset-password', {
        token: 'made-up',
        newPassword: 'brand new password 1',
      }),
      400,
      'INVALID_LINK_TOKEN',
    );
    await new Client(srv.url).post('/api/auth/forgot-password', { email: user.email });
    const token = await resetLink(user.email);
    srv.advance(61 * 60_000);
    expectError(
      await new Client(srv.url).post('/api/auth/reset-password', { token, newPassword: 'brand new password 1' }),
      400,
      'EXPIRED_TOKEN',
    );
  });
});

describe('email verification', () => {
  it('verifies with the link mailed at signup, once', async () => {
    const user = await signedUp(srv.url);
    const token = CaptureMailer.tokenOf(await srv.mail.next(user.email, /Verify/));
    expect((await user.client.get('/api/auth/me')).body.user.emailVerified).toBe(false);
    const res = await new Client(srv.url).post('/api/auth/verify-email', { token });
    expect(res.status).toBe(200);
    expect(res.body.account).toMatchObject({ email: user.email, emailVerified: true });
    expect((await user.client.get('/api/auth/me')).body.user.emailVerified).toBe(true);
    expectError(await new Client(srv.url).post('/api/auth/verify-email', { token }), 400, 'INVALID_LINK_TOKEN');
  });

  it('mails a new confirmation link on request, which confirms; none once confirmed, and none without a session', async () => {
    const user = await signedUp(srv.url);
    const first = await srv.mail.next(user.email, /Verify/);
    const resent = await user.client.post('/api/auth/verify-email/resend');
    expect([resent.status, resent.body]).toEqual([200, { sent: true }]);
    const second = await srv.mail.next(user.email, /Verify/);
    expect(second).not.toBe(first);
    expect(
      (await new Client(srv.url).post('/api/auth/verify-email', { token: CaptureMailer.tokenOf(second) })).status,
    ).toBe(200);
    const count = srv.mail.sent.length;
    expect((await user.client.post('/api/auth/verify-email/resend')).body).toEqual({ sent: false });
    expect(srv.mail.sent.length).toBe(count);
    expectError(await new Client(srv.url).post('/api/auth/verify-email/resend'), 401, 'UNAUTHENTICATED');
  });

  it('voids a link sent to an address the account has since left', async () => {
    const user = await signedUp(srv.url);
    const oldToken = CaptureMailer.tokenOf(await srv.mail.next(user.email, /Verify/));
    await user.client.post('/api/account/email', {
      currentPassword: user.password,
      newEmail: `${unique('moved')}@example.com`,
    });
    expectError(
      await new Client(srv.url).post('/api/auth/verify-email', { token: oldToken }),
      400,
      'INVALID_LINK_TOKEN',
    );
  });
});
