// One account flow over real HTTP, run on each store adapter: same answers whatever the store.
import { describe, expect, it } from 'vitest';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { Client } from '../support/server.js';
import { unique } from '../support/temp.js';

export function accountsFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`account flow on the ${name} store`, () => {
    const served = serveStore(open);

    it('signs up with a default project, refuses a duplicate email, logs in, changes the password', async () => {
      const email = `${unique('Flow')}@Example.com`;
      const a = new Client(served.srv.url);
      const signup = await a.post('/api/auth/signup', { email, password: 'first password 123' });
      expect(signup.status).toBe(201);
      expect(signup.body.account.email).toBe(email.toLowerCase());
      expect(signup.body.account.defaultProjectId).toEqual(expect.any(String));
      const project = await served.srv.store.projects.get(signup.body.account.defaultProjectId);
      expect(project).toMatchObject({ ownerId: signup.body.account.id, plan: 'free' });

      const dup = await new Client(served.srv.url).post('/api/auth/signup', {
        email: email.toUpperCase(),
        password: 'another password 1',
      });
      expect(dup.status).toBe(409);
      expect(dup.body.error.code).toBe('EMAIL_TAKEN');

      const wrong = await new Client(served.srv.url).post('/api/auth/login', { email, password: 'wrong password 123' });
      expect(wrong.body.error.code).toBe('INVALID_CREDENTIALS');
      const b = new Client(served.srv.url);
      expect((await b.post('/api/auth/login', { email, password: 'first password 123' })).status).toBe(200);

      const bad = await a.post('/api/auth/change-password', {
        currentPassword: 'not it at all 1',
        newPassword: 'second password 123',
      });
      expect(bad.body.error.code).toBe('INVALID_CURRENT_PASSWORD');
      const short = await a.post('/api/auth/change-password', {
        currentPassword: 'first password 123',
        newPassword: 'short',
      });
      expect(short.body.error.code).toBe('INVALID_PASSWORD');
      const changed = await a.post('/api/auth/change-password', {
        currentPassword: 'first password 123',
        newPassword: 'second password 123',
      });
      expect(changed.status).toBe(200);
      expect((await a.get('/api/auth/me')).status).toBe(200);
      expect((await b.get('/api/auth/me')).body.error.code).toBe('UNAUTHENTICATED');
      expect(
        (await new Client(served.srv.url).post('/api/auth/login', { email, password: 'second password 123' })).status,
      ).toBe(200);
    });

    it('resolves a referral code before creating anything, and grants the months', async () => {
      const referrer = new Client(served.srv.url);
      await referrer.post('/api/auth/signup', {
        email: `${unique('ref')}@example.com`,
        password: 'referrer password 1',
      });
      const code = (await referrer.get('/api/auth/me')).body.referral.code;
      expect(code).toMatch(/^[0-9bcdfghjkmnpqrstvwxyz]{12}$/);

      const email = `${unique('referred')}@example.com`;
      const unknown = await new Client(served.srv.url).post('/api/auth/signup', {
        email,
        password: 'referred password 1',
        referralCode: 'bbbbbbbbbbbb',
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.code).toBe('REFERRAL_CODE_INVALID');
      expect(await served.srv.store.accounts.findOne({ email })).toBeNull();

      const referred = new Client(served.srv.url);
      expect(
        (await referred.post('/api/auth/signup', { email, password: 'referred password 1', referralCode: code }))
          .status,
      ).toBe(201);
      expect((await referred.get('/api/auth/me')).body.referral).toMatchObject({ months: 1, referred: true });
      expect((await referrer.get('/api/auth/me')).body.referral).toMatchObject({ months: 1, referred: false });
    });

    it('creates, lists, shares tokens for and deletes projects', async () => {
      const c = new Client(served.srv.url);
      await c.post('/api/auth/signup', { email: `${unique('proj')}@example.com`, password: 'project password 1' });
      const second = await c.post('/api/projects', { name: 'Second' });
      expect(second.status).toBe(201);
      const issued = await c.post('/api/accounts/tokens', {
        name: 'agent',
        scope: 'workspace',
        projectId: second.body.projectId,
      });
      expect(issued.status).toBe(201);
      const bearer = new Client(served.srv.url, { authorization: `Bearer ${issued.body.secret}` });
      expect((await bearer.get('/api/whoami')).body.workspace).toEqual({ projectId: second.body.projectId });
      const page1 = await c.get('/api/projects?limit=1');
      expect(page1.body.projects).toHaveLength(1);
      const page2 = await c.get(`/api/projects?limit=1&cursor=${page1.body.pagination.nextCursor}`);
      expect(page2.body.projects[0]).toMatchObject({ projectId: second.body.projectId, agentCount: 1, starred: false });
      expect(page2.body.pagination).toEqual({ nextCursor: null, cursorReset: false });
      expect((await c.request('DELETE', `/api/projects/${second.body.projectId}`)).status).toBe(204);
      expect((await bearer.get('/api/whoami')).body.error.code).toBe('INVALID_SERVICE_TOKEN');
      expect((await c.get('/api/projects')).body.projects).toHaveLength(1);
    });

    it('answers INVALID_EMAIL and INVALID_PASSWORD on signup', async () => {
      const c = new Client(served.srv.url);
      expect(
        (await c.post('/api/auth/signup', { email: 'not-an-email', password: 'long enough password' })).body.error.code,
      ).toBe('INVALID_EMAIL');
      expect(
        (await c.post('/api/auth/signup', { email: `${unique('p')}@example.com`, password: 'short' })).body.error.code,
      ).toBe('INVALID_PASSWORD');
      expect(
        (await c.post('/api/auth/signup', { email: `${unique('p')}@example.com`, password: 'x'.repeat(129) })).body
          .error.code,
      ).toBe('INVALID_PASSWORD');
    });
  });
}
