// Mailed single-use links over real HTTP: forgot/reset password and email verification.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CaptureMailer, Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';
import { unique } from '../support/temp.js';
import { verifyEmail } from '../support/verify-email.js';
import { ACCOUNT_MAILS_PER_HOUR } from '../../src/accounts/recovery.js';

let srv: TestServer;
beforeAll(async () => {
  // One socket address signs up and resets for everyone here.
  srv = await startTestServer({ ADDRESS_RATE_PER_MINUTE: '1000' });
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

describe('unused reset links', () => {
  /** Asks for a reset of `email` and waits for that mail's link (not an earlier one). */
  const freshLink = async (email: string) => {
    const before = srv.mail.sent.filter((m) => m.to === email && /Reset/.test(m.subject)).length;
    await new Client(srv.url).post('/api/auth/forgot-password', { email });
    await vi.waitFor(() =>
      expect(srv.mail.sent.filter((m) => m.to === email && /Reset/.test(m.subject)).length).toBe(before + 1),
    );
    return resetLink(email);
  };
  const resetWith = (token: string, newPassword = 'someone else 4444') =>
    new Client(srv.url).post('/api/auth/reset-password', { token, newPassword });
  const liveLinks = (accountId: string) => srv.store.linkTokens.count({ accountId, purpose: 'reset-password' });

  it('die when the password is reset with another one', async () => {
    const user = await signedUp(srv.url);
    const older = await freshLink(user.email);
    const newer = await freshLink(user.email);
    expect((await resetWith(newer, 'owner password 22')).status).toBe(204);
    expectError(await resetWith(older), 400, 'INVALID_LINK_TOKEN');
    expect(await liveLinks(user.accountId)).toBe(0);
  });

  it('die when the owner changes the password, or the address, signed in', async () => {
    const user = await signedUp(srv.url);
    const leaked = await freshLink(user.email);
    const changed = await user.client.post('/api/auth/change-password', {
      currentPassword: user.password,
      newPassword: 'owner password 33',
    });
    expect(changed.status, changed.text).toBe(200);
    expectError(await resetWith(leaked), 400, 'INVALID_LINK_TOKEN');

    await freshLink(user.email);
    expect(await liveLinks(user.accountId)).toBe(1);
    const moved = await user.client.post('/api/account/email', {
      currentPassword: 'owner password 33',
      newEmail: `${unique('moved')}@example.com`,
    });
    expect(moved.status, moved.text).toBe(200);
    expect(await liveLinks(user.accountId)).toBe(0);
  });
});

describe('mail budgets per account', () => {
  const resetMails = (email: string) => srv.mail.sent.filter((m) => m.to === email && /Reset/.test(m.subject));

  it('sends an account at most 3 reset links an hour, answers every ask the same, and only the newest works', async () => {
    srv.holdBudgets(3_600_000);
    const user = await signedUp(srv.url);
    const c = new Client(srv.url);
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => c.post('/api/auth/forgot-password', { email: user.email })),
    );
    const ghost = await c.post('/api/auth/forgot-password', { email: `${unique('ghost')}@example.com` });
    expect(new Set([...answers, ghost].map((a) => `${a.status} ${a.text}`))).toEqual(new Set([`202 ${ghost.text}`]));
    await vi.waitFor(() => expect(resetMails(user.email)).toHaveLength(ACCOUNT_MAILS_PER_HOUR));
    // The asks not awaited by the route have all run once the store holds one link and no more mail comes.
    await vi.waitFor(async () =>
      expect(await srv.store.linkTokens.count({ accountId: user.accountId, purpose: 'reset-password' })).toBe(1),
    );
    const tokens = resetMails(user.email).map((m) => CaptureMailer.tokenOf(m));
    const tried = await Promise.all(
      tokens.map((token) =>
        new Client(srv.url).post('/api/auth/reset-password', { token, newPassword: 'brand new password 5' }),
      ),
    );
    expect(tried.map((r) => r.status).sort()).toEqual([204, 400, 400]);

    srv.advance(3_600_000);
    await c.post('/api/auth/forgot-password', { email: user.email });
    await vi.waitFor(() => expect(resetMails(user.email)).toHaveLength(ACCOUNT_MAILS_PER_HOUR + 1));
  });

  it('resends a confirmation link at most 3 times an hour, counting the one signup sent', async () => {
    srv.holdBudgets(3_600_000);
    const user = await signedUp(srv.url);
    const resent = [];
    for (let i = 0; i < 4; i++) resent.push((await user.client.post('/api/auth/verify-email/resend')).body);
    expect(resent).toEqual([{ sent: true }, { sent: true }, { sent: false }, { sent: false }]);
    expect(srv.mail.sent.filter((m) => m.to === user.email && /Verify/.test(m.subject))).toHaveLength(3);
    // A new address has links of its own: the change mails it one, and it confirms.
    const moved = `${unique('moved')}@example.com`;
    const changed = await user.client.post('/api/account/email', { currentPassword: user.password, newEmail: moved });
    expect(changed.status, changed.text).toBe(200);
    await verifyEmail(srv, moved, user.client);
  });
});

describe('email verification', () => {
  it('verifies with the link mailed at signup, once, in a session of that account only', async () => {
    const user = await signedUp(srv.url);
    const token = CaptureMailer.tokenOf(await srv.mail.next(user.email, /Verify/));
    expect((await user.client.get('/api/auth/me')).body.user.emailVerified).toBe(false);
    // Signed out, or signed in as another account: refused, and the link stays good.
    expectError(await new Client(srv.url).post('/api/auth/verify-email', { token }), 401, 'UNAUTHENTICATED');
    const other = await signedUp(srv.url);
    expectError(await other.client.post('/api/auth/verify-email', { token }), 400, 'INVALID_LINK_TOKEN');
    expect((await other.client.get('/api/auth/me')).body.user.emailVerified).toBe(false);
    const res = await user.client.post('/api/auth/verify-email', { token });
    expect(res.status).toBe(200);
    expect(res.body.account).toMatchObject({ email: user.email, emailVerified: true });
    expect((await user.client.get('/api/auth/me')).body.user.emailVerified).toBe(true);
    expectError(await user.client.post('/api/auth/verify-email', { token }), 400, 'INVALID_LINK_TOKEN');
  });

  it('mails a new confirmation link on request, which confirms; none once confirmed, and none without a session', async () => {
    const user = await signedUp(srv.url);
    const first = await srv.mail.next(user.email, /Verify/);
    const resent = await user.client.post('/api/auth/verify-email/resend');
    expect([resent.status, resent.body]).toEqual([200, { sent: true }]);
    const second = await srv.mail.next(user.email, /Verify/);
    expect(second).not.toBe(first);
    expect((await user.client.post('/api/auth/verify-email', { token: CaptureMailer.tokenOf(second) })).status).toBe(
      200,
    );
    const count = srv.mail.sent.length;
    expect((await user.client.post('/api/auth/verify-email/resend')).body).toEqual({ sent: false });
    expect(srv.mail.sent.length).toBe(count);
    expectError(await new Client(srv.url).post('/api/auth/verify-email/resend'), 401, 'UNAUTHENTICATED');
  });

  it('tells whoever did not sign up to ignore the mail, at signup and on a change of address', async () => {
    const user = await signedUp(srv.url);
    const ignore =
      'If you did not sign up or ask for this, ignore this mail: the link does nothing unless it is opened signed in to the account.';
    const atSignup = await srv.mail.next(user.email, /^Verify your email/);
    expect(atSignup.text).toContain('http://board.test/verify-email#token=');
    expect(atSignup.text.split('\n').at(-1)).toBe(ignore);
    const newEmail = `${unique('moved')}@example.com`;
    const moved = await user.client.post('/api/account/email', { currentPassword: user.password, newEmail });
    expect(moved.status, moved.text).toBe(200);
    expect((await srv.mail.next(newEmail, /^Verify your email/)).text.split('\n').at(-1)).toBe(ignore);
  });

  it('voids a link sent to an address the account has since left', async () => {
    const user = await signedUp(srv.url);
    const oldToken = CaptureMailer.tokenOf(await srv.mail.next(user.email, /Verify/));
    await user.client.post('/api/account/email', {
      currentPassword: user.password,
      newEmail: `${unique('moved')}@example.com`,
    });
    expectError(await user.client.post('/api/auth/verify-email', { token: oldToken }), 400, 'INVALID_LINK_TOKEN');
  });
});

describe('a reset that proves the address', () => {
  /** Resets `email`'s password with a freshly mailed link. */
  const reset = async (email: string, newPassword: string) => {
    await new Client(srv.url).post('/api/auth/forgot-password', { email });
    const res = await new Client(srv.url).post('/api/auth/reset-password', {
      token: await resetLink(email),
      newPassword,
    });
    expect(res.status, res.text).toBe(204);
  };
  const accountToken = async (client: Client) => {
    const res = await client.post('/api/accounts/tokens', { name: unique('tok'), scope: 'account' });
    expect(res.status, res.text).toBe(201);
    return new Client(srv.url, { authorization: `Bearer ${res.body.secret}` });
  };

  it('revokes what was issued before under an unconfirmed address: a pre-hijack token dies', async () => {
    // Someone signs up with the victim's address, never confirms it, and keeps a token, a code and an approval.
    const email = `${unique('victim')}@example.com`;
    const attacker = new Client(srv.url);
    const signup = await attacker.post('/api/auth/signup', { email, password: 'attacker password 123' });
    expect(signup.status, signup.text).toBe(201);
    const backdoor = await accountToken(attacker);
    const ownBoard = (await srv.store.accounts.get(signup.body.account.id))!.defaultProjectId!;
    const code = await backdoor.post(`/api/projects/${ownBoard}/agents/enroll`, { uses: 5, ttlSeconds: 86_400 });
    expect(code.status, code.text).toBe(201);
    const device = await new Client(srv.url).post('/api/auth/device/start', { clientName: 'bot' });
    const approved = await attacker.post('/api/auth/device/approve', {
      userCode: device.body.userCode,
      projectId: ownBoard,
      approve: true,
    });
    expect(approved.status, approved.text).toBe(200);
    // And invites an account of theirs (confirmed) to be admin of the board the victim will inherit.
    const accomplice = await signedUp(srv.url);
    await verifyEmail(srv, accomplice.email, accomplice.client);
    const invitedIn = await attacker.post(`/api/boards/${ownBoard}/invitations`, {
      email: accomplice.email,
      role: 'admin',
    });
    expect(invitedIn.status, invitedIn.text).toBe(201);
    const inMail = await srv.mail.next(accomplice.email, /^Invitation to the board/);

    // The victim finds the address taken, takes the account over by mail, and joins a colleague's board.
    await reset(email, 'victim new password 1');
    const victim = new Client(srv.url);
    expect((await victim.post('/api/auth/login', { email, password: 'victim new password 1' })).status).toBe(200);
    await verifyEmail(srv, email, victim);
    const colleague = await signedUp(srv.url);
    const board = (await srv.store.accounts.get(colleague.accountId))!.defaultProjectId!;
    const invited = await colleague.client.post(`/api/boards/${board}/invitations`, { email, role: 'admin' });
    expect(invited.status, invited.text).toBe(201);
    const mail = await srv.mail.next(email, /^Invitation to the board/);
    const invitationId = /\/invitations\/([\w-]+)#token=/.exec(mail.text)![1]!;
    const accepted = await victim.post(`/api/boards/invitations/${invitationId}/accept`, {
      token: CaptureMailer.tokenOf(mail),
    });
    expect(accepted.status, accepted.text).toBe(200);

    // Nothing the attacker made before the reset acts on the account any more.
    expectError(await backdoor.get('/api/whoami'), 401, 'INVALID_SERVICE_TOKEN');
    expect((await backdoor.post(`/api/boards/${board}/agents/enroll`, { uses: 1, ttlSeconds: 600 })).status).toBe(401);
    expectError(await attacker.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    expectError(
      await new Client(srv.url).post('/api/projects/enroll', { code: code.body.code, name: 'late-agent' }),
      400,
      'INVALID_LINK_TOKEN',
    );
    expectError(
      await new Client(srv.url).post('/api/auth/device/poll', { deviceCode: device.body.deviceCode }),
      400,
      'ACCESS_DENIED',
    );
    const lateAccept = await accomplice.client.post(
      `/api/boards/invitations/${/\/invitations\/([\w-]+)#token=/.exec(inMail.text)![1]!}/accept`,
      { token: CaptureMailer.tokenOf(inMail) },
    );
    expectError(lateAccept, 400, 'INVALID_LINK_TOKEN'); // revoked with the rest
    expect((await srv.store.members.find({ projectId: ownBoard })).map((m) => m.role)).toEqual(['owner']);
    // The reset proved the mailbox: the address is confirmed.
    expect((await srv.store.accounts.get(signup.body.account.id))!.emailVerified).toBe(true);
  });

  it('leaves the tokens of a confirmed account, and the confirmation link revokes nothing', async () => {
    const user = await signedUp(srv.url);
    const before = await accountToken(user.client);
    await verifyEmail(srv, user.email, user.client);
    expect((await before.get('/api/whoami')).status).toBe(200);
    await reset(user.email, 'brand new password 2');
    expect((await before.get('/api/whoami')).status).toBe(200);
    expectError(await user.client.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
  });
});
