// The operator console in a browser: the firehose shows a busy board's events as they commit;
// an operator finds an account, revokes its credentials (its agent's socket closes), acts as it
// (the banner names it on every page) and ends that; anyone else gets the unknown path's 404 at
// /admin and at the console's code.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { screenshot, signerIn, signUpInPage, useBrowserTabs } from '../support/browser.js';
import { confirmingSignIn, operatorEmail } from '../support/operators.js';
import { Client, signedUp } from '../support/server.js';
import { openSocket } from '../support/socket.js';

const chromium = inject('chromium');
const OPERATOR = operatorEmail();

describe.skipIf(!chromium)('the operator console (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'admin', { OPERATOR_EMAILS: OPERATOR });

  const asOperator = confirmingSignIn(() => tabs.server, OPERATOR, signerIn(OPERATOR));

  async function busyAccount() {
    const person = await signedUp(tabs.server.url);
    const projectId = (await person.client.get('/api/projects')).body.projects[0].projectId as string;
    const token = await person.client.post('/api/accounts/tokens', {
      name: 'builder',
      scope: 'workspace',
      projectId,
      role: 'member',
    });
    expect(token.status, token.text).toBe(201);
    const agent = new Client(tabs.server.url, { authorization: `Bearer ${token.body.secret}` });
    return { person, projectId, agent, secret: token.body.secret as string };
  }

  it('shows a busy board’s events live in the firehose, narrowed to the account, and pauses', async () => {
    const { person, projectId, agent } = await busyAccount();
    const other = await busyAccount();
    const { page, problems } = await tabs.tab();
    await asOperator(page);
    await page.goto('/admin');
    await page.locator('section.live[data-state="live"]').waitFor();

    for (let i = 1; i <= 5; i++) expect((await agent.post('/api/items', { title: `Task ${i}` })).status).toBe(201);
    await page.locator(`tr[data-board="${projectId}"]`, { hasText: 'item.created' }).nth(4).waitFor();
    expect(await page.locator(`tr[data-board="${projectId}"]`).count()).toBeGreaterThanOrEqual(5);

    // Narrowed to the account's boards: another board's events stay out.
    await page.getByLabel('Account').fill(person.email);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText(`1 board (${person.email})`).waitFor();
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    expect((await other.agent.post('/api/items', { title: 'elsewhere' })).status).toBe(201);
    expect((await agent.post('/api/items', { title: 'Task 6' })).status).toBe(201);
    await page.locator(`tr[data-board="${projectId}"]`, { hasText: 'W-6' }).waitFor();
    expect(await page.locator(`tr[data-board="${other.projectId}"]`).count()).toBe(0);

    // Paused, arrivals are held and counted, and shown on resume.
    await page.getByRole('button', { name: 'Pause' }).click();
    expect((await agent.post('/api/items', { title: 'Task 7' })).status).toBe(201);
    await page.getByRole('button', { name: 'Resume (1 new)' }).waitFor();
    expect(await page.locator(`tr[data-board="${projectId}"]`, { hasText: 'W-7' }).count()).toBe(0);
    for (let i = 8; i <= 20; i++)
      expect((await agent.post('/api/items', { title: `Task ${i}`, priority: i % 4 })).status).toBe(201);
    await page.getByRole('button', { name: /^Resume/ }).click();
    await page.locator(`tr[data-board="${projectId}"]`, { hasText: 'W-20' }).waitFor();
    await screenshot(page, 'admin-live');
    expect(problems).toEqual([]);
  });

  it('finds a user, revokes their tokens (the agent’s socket closes), impersonates them and ends it', async () => {
    const { person, secret } = await busyAccount();
    const socket = await openSocket(tabs.server.url, { authorization: `Bearer ${secret}` });
    const { page, problems } = await tabs.tab();
    await asOperator(page);
    await page.goto('/admin/users');
    await page.getByLabel('Email prefix or account id').fill(person.email.slice(0, 12));
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: person.email }).click();
    await page.getByRole('heading', { name: person.email }).waitFor();
    await page.getByText('builder').first().waitFor();

    await page.getByRole('button', { name: 'Revoke sessions and tokens' }).click();
    await page.getByText('1 live token)').waitFor(); // what it will do, before doing it
    const yes = page.getByRole('button', { name: 'Yes, revoke sessions and tokens' });
    expect(await yes.isDisabled()).toBe(true); // no reason yet
    await page.getByLabel('Reason (kept in the audit log)').fill('abuse report #12');
    await screenshot(page, 'admin-user-confirm');
    await yes.click();
    expect((await socket.closed).code).toBe(4001);
    await page.getByRole('status').filter({ hasText: 'Revoked' }).waitFor();

    await page.getByRole('button', { name: 'Impersonate' }).click();
    await page.getByLabel('Reason (kept in the audit log)').fill('support ticket 7');
    await page.getByRole('button', { name: 'Yes, impersonate' }).click();
    const banner = page.getByRole('status', { name: 'Impersonation' });
    await banner.getByText(person.email).waitFor();
    await screenshot(page, 'admin-impersonating');
    // The console is shut meanwhile, as to anyone else.
    expect((await page.request.get('/admin')).status()).toBe(404);

    await banner.getByRole('button', { name: 'End' }).click();
    await page.getByRole('heading', { name: person.email }).waitFor();
    expect(await banner.count()).toBe(0);

    // The audit section finds what was done, and the overview shows this node's figures.
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByLabel('target').fill(`account:${person.accountId}`);
    await page.getByRole('button', { name: 'Filter' }).click();
    for (const action of ['admin.revoke', 'admin.impersonate', 'admin.impersonation.end'])
      await page.locator('table.list').getByText(action, { exact: true }).waitFor(); // beside its words
    await screenshot(page, 'admin-audit');
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Nodes' }).waitFor();
    await page.locator('section.panel', { hasText: 'Nodes' }).getByText('(this node)').waitFor();
    await page.locator('section.panel', { hasText: 'Durability' }).locator('dl.facts dt').first().waitFor();
    // Alerts first: the quiet line, or what needs an operator (a CI disk may be nearly full).
    await page.locator('section[aria-label="Alerts"]').locator('p.muted, ul.alerts').first().waitFor();
    await screenshot(page, 'admin-overview');
    expect(problems).toEqual([]);
  });

  it('deletes an account and restores it, each after saying what it does; a purge waits for the exact email', async () => {
    const { person } = await busyAccount();
    const { page, problems } = await tabs.tab();
    await asOperator(page);
    await page.goto(`/admin/users/${person.accountId}`);
    await page.getByRole('heading', { name: person.email }).waitFor();
    await page.getByRole('button', { name: 'Delete account' }).click();
    await page.getByText('Everything is kept 30 days').waitFor();
    await page.getByLabel('Reason (kept in the audit log)').fill('asked by mail');
    await page.getByRole('button', { name: 'Yes, delete account' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted; restorable for 30 days.' }).waitFor();
    await page.locator('.pill.deleted').first().waitFor();
    expect(
      (await new Client(tabs.server.url).post('/api/auth/login', { email: person.email, password: person.password }))
        .status,
    ).toBe(403);

    await page.getByRole('button', { name: 'Purge now' }).click();
    await page.getByLabel('Reason (kept in the audit log)').fill('asked by mail');
    const purge = page.getByRole('button', { name: 'Yes, purge now' });
    await page.getByLabel(/^Type .* to confirm$/).fill('someone-else@example.com');
    expect(await purge.isDisabled()).toBe(true);
    await screenshot(page, 'admin-purge-confirm');
    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: 'Restore account' }).click();
    await page.getByLabel('Reason (kept in the audit log)').fill('mistake');
    await page.getByRole('button', { name: 'Yes, restore account' }).click();
    await page.getByRole('status').filter({ hasText: 'Restored.' }).waitFor();
    expect(
      (await new Client(tabs.server.url).post('/api/auth/login', { email: person.email, password: person.password }))
        .status,
    ).toBe(200);
    expect(problems).toEqual([]);
  });

  it('gives anyone else the unknown path’s 404 at /admin and at the console’s code', async () => {
    const { page } = await tabs.tab();
    await signUpInPage(page, `someone-${Date.now()}@example.com`);
    const body = async (path: string) => {
      const res = await page.request.get(path);
      return { status: res.status(), body: (await res.text()).replace(/"requestId":"[^"]*"/, '') };
    };
    const unknown = await body('/no-such-page');
    expect(unknown.status).toBe(404);
    const chunks = readdirSync(fileURLToPath(new URL('../../dist/web/admin/assets/', import.meta.url)));
    expect(chunks.some((f) => f.endsWith('.js'))).toBe(true);
    for (const path of ['/admin', '/admin/users', '/admin/users/x', ...chunks.map((f) => `/admin/assets/${f}`)])
      expect(await body(path), path).toEqual(unknown);
    // The page's own route to /admin (a link followed in the page) finds nothing either.
    await page.evaluate(`history.pushState(null, '', '/admin'); dispatchEvent(new PopStateEvent('popstate'))`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await screenshot(page, 'admin-refused');
  });
});
