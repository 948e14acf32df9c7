// The remaining account rules over real HTTP: per-address rate limits, referral failures, input shapes.
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { StoreUnavailableError, type Store } from '../../store/ports/store.js';
import { CaptureMailer, Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect-error.js';
import { SIGN_INS_PER_QUARTER_HOUR } from '../../src/accounts/service.js';
import { tempDir, unique } from '../support/temp.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(env: Record<string, string> = {}, store?: Store): Promise<TestServer> {
  const srv = await startTestServer(env, store);
  cleanups.push(() => srv.stop());
  return srv;
}

describe('per-address rate limits', () => {
  it('deny signup, login, change-password and change-email past the address budget, with Retry-After and no mutation', async () => {
    const srv = await serve({ ADDRESS_RATE_PER_MINUTE: '4' });
    srv.holdBudgets();
    const user = await signedUp(srv.url); // 1
    const c = new Client(srv.url);
    expect((await c.post('/api/auth/login', { email: user.email, password: user.password })).status).toBe(200); // 2
    expectError(
      await c.post('/api/auth/login', { email: user.email, password: 'wrong password 00' }),
      401,
      'INVALID_CREDENTIALS',
    ); // 3
    expect(
      (await user.client.post('/api/account/email', { currentPassword: 'nope nope nope', newEmail: 'x@example.com' }))
        .status,
    ).toBe(401); // 4
    const denied = await c.post('/api/auth/login', { email: user.email, password: user.password });
    expectError(denied, 429, 'RATE_LIMITED');
    expect(Number(denied.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expectError(
      await user.client.post('/api/auth/change-password', {
        currentPassword: user.password,
        newPassword: 'never applied 123',
      }),
      429,
      'RATE_LIMITED',
    );
    const email = `${unique('late')}@example.com`;
    expectError(
      await new Client(srv.url).post('/api/auth/signup', { email, password: 'a long enough password' }),
      429,
      'RATE_LIMITED',
    );
    expect(await srv.store.accounts.findOne({ email })).toBeNull();
    srv.advance(60_000);
    expect((await c.post('/api/auth/login', { email: user.email, password: user.password })).status).toBe(200);
  });
});

describe('sign-ins per email address', () => {
  it('count every wrong password for an address from anywhere, concurrent ones too, and refuse the rest with Retry-After', async () => {
    const srv = await serve({ ADDRESS_RATE_PER_MINUTE: '1000', TRUSTED_PROXIES: '127.0.0.1' });
    srv.holdBudgets(15 * 60_000);
    const [victim, bystander] = [await signedUp(srv.url), await signedUp(srv.url)];
    // Each guess from an address (a /64) of its own, all at once: the per-address budget never bites.
    const from = (i: number) => ({ 'x-forwarded-for': `2001:db8:${i.toString(16)}::1` });
    // Right passwords cost nothing: more of them than the budget all sign in.
    for (let i = 0; i < SIGN_INS_PER_QUARTER_HOUR + 5; i++) {
      const signedIn = await new Client(srv.url).post(
        '/api/auth/login',
        { email: victim.email, password: victim.password },
        from(500 + i),
      );
      expect(signedIn.status, signedIn.text).toBe(200);
    }
    const guesses = await Promise.all(
      Array.from({ length: SIGN_INS_PER_QUARTER_HOUR + 10 }, (_, i) =>
        new Client(srv.url).post('/api/auth/login', { email: victim.email, password: `wrong guess ${i}` }, from(i)),
      ),
    );
    expect(guesses.filter((g) => g.status === 401).length).toBe(SIGN_INS_PER_QUARTER_HOUR);
    for (const refused of guesses.filter((g) => g.status !== 401)) expectError(refused, 429, 'RATE_LIMITED');
    // The right password too, in any case, from a fresh address; another address's sign-ins go on.
    const right = await new Client(srv.url).post(
      '/api/auth/login',
      { email: ` ${victim.email.toUpperCase()}`, password: victim.password },
      from(999),
    );
    expectError(right, 429, 'RATE_LIMITED');
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const other = await new Client(srv.url).post(
      '/api/auth/login',
      { email: bystander.email, password: bystander.password },
      from(999),
    );
    expect(other.status, other.text).toBe(200);
    // Signed-in sessions are not touched, and the next window signs in again.
    expect((await victim.client.get('/api/auth/me')).status).toBe(200);
    srv.advance(15 * 60_000);
    const later = await new Client(srv.url).post(
      '/api/auth/login',
      { email: victim.email, password: victim.password },
      from(998),
    );
    expect(later.status, later.text).toBe(200);
  });

  it('let the owner in at once after a reset, whatever the old password’s budget says', async () => {
    const srv = await serve({ ADDRESS_RATE_PER_MINUTE: '1000' });
    srv.holdBudgets(15 * 60_000);
    const victim = await signedUp(srv.url);
    const guess = (password: string) => new Client(srv.url).post('/api/auth/login', { email: victim.email, password });
    for (let i = 0; i < SIGN_INS_PER_QUARTER_HOUR; i++) expect((await guess(`wrong guess ${i}`)).status).toBe(401);
    expectError(await guess(victim.password), 429, 'RATE_LIMITED');
    expect((await new Client(srv.url).post('/api/auth/forgot-password', { email: victim.email })).status).toBe(202);
    const token = CaptureMailer.tokenOf(await srv.mail.next(victim.email, /^Reset your board password/));
    const reset = await new Client(srv.url).post('/api/auth/reset-password', {
      token,
      newPassword: 'a brand new password 1',
    });
    expect(reset.status, reset.text).toBe(204);
    expect((await guess('a brand new password 1')).status).toBe(200);
  });
});

describe('signup input', () => {
  it('refuses unknown properties and a referral code outside the alphabet or length', async () => {
    const srv = await serve();
    const c = new Client(srv.url);
    const base = { email: `${unique('s')}@example.com`, password: 'a long enough password' };
    for (const referralCode of ['short', 'aaaaaaaaaaaa', 'BBBBBBBBBBBB', 'bbbbbbbbbbbbb']) {
      const res = await c.post('/api/auth/signup', { ...base, referralCode });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.body.error.message).toContain('body.referralCode');
    }
    expectError(await c.post('/api/auth/signup', { ...base, plan: 'pro' }), 400, 'INVALID_INPUT');
    expect(await srv.store.accounts.findOne({ email: base.email })).toBeNull();
  });

  it('answers REFERRAL_UNAVAILABLE when the referral ledger cannot answer, and creates nothing', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const real = await openEmbeddedStore(dir.path);
    let down = false;
    const accounts = new Proxy(real.accounts, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'findOne' || typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          down ? Promise.reject(new StoreUnavailableError(new Error('ledger down'))) : value.apply(target, args);
      },
    });
    const srv = await serve({}, { ...real, accounts, ping: real.ping, close: real.close });
    const email = `${unique('r')}@example.com`;
    down = true;
    expectError(
      await new Client(srv.url).post('/api/auth/signup', {
        email,
        password: 'a long enough password',
        referralCode: 'bcdfghjkmnpq',
      }),
      503,
      'REFERRAL_UNAVAILABLE',
    );
    down = false;
    expect(await srv.store.accounts.findOne({ email })).toBeNull();
  });
});

describe('session-only operations', () => {
  it('answer UNAUTHENTICATED without a session, Bearer or not', async () => {
    const srv = await serve();
    const { client } = await signedUp(srv.url);
    const secret = (await client.post('/api/accounts/tokens', { name: 'a', scope: 'account' })).body.secret;
    for (const c of [new Client(srv.url), new Client(srv.url, { authorization: `Bearer ${secret}` })]) {
      expectError(
        await c.post('/api/auth/change-password', { currentPassword: 'x', newPassword: 'y' }),
        401,
        'UNAUTHENTICATED',
      );
      expectError(
        await c.post('/api/account/email', { currentPassword: 'x', newEmail: 'y@example.com' }),
        401,
        'UNAUTHENTICATED',
      );
      expectError(await c.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      expectError(await c.get('/api/projects'), 401, 'UNAUTHENTICATED');
      expectError(await c.request('PATCH', '/api/account/profile', { json: {} }), 401, 'UNAUTHENTICATED');
    }
  });
});
