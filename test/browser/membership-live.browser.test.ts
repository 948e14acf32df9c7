// An open board page follows its viewer's membership live: a lowered role takes the write controls
// away without a reload, and a removal tells the person they lost access.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { landOn, launchChromium, openPage, screenshot, startBrowserServer } from '../support/browser.js';
import { signedUp, type TestServer } from '../support/server.js';
import { verifyEmail } from '../support/verify-email.js';

const chromium = inject('chromium');

describe.skipIf(!chromium)('a member’s open board page (Chromium)', () => {
  let browser: Browser;
  let server: TestServer;
  beforeAll(async () => {
    [browser, server] = await Promise.all([launchChromium(chromium!), startBrowserServer()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('follows a lowered role and a removal without a reload', async () => {
    const [owner, member] = await Promise.all([signedUp(server.url), signedUp(server.url)]);
    await verifyEmail(server, member.email, member.client); // accepting an invitation takes a confirmed address
    const projectId = (await owner.client.get('/api/projects')).body.projects[0].projectId as string;
    // The member joins through an invitation, as a person would.
    expect(
      (await owner.client.post(`/api/boards/${projectId}/invitations`, { email: member.email, role: 'member' })).status,
    ).toBe(201);
    const mail = await server.mail.next(member.email, /^Invitation to the board/);
    const link = new URL(/(https?:\/\/\S+\/invitations\/\S+)/.exec(mail.text)![1]!);
    const token = new URLSearchParams(link.hash.slice(1)).get('token')!;
    const invitationId = link.pathname.split('/').at(-1)!;
    expect((await member.client.post(`/api/boards/invitations/${invitationId}/accept`, { token })).status).toBe(200);

    const tab = await openPage(browser, server);
    const page = tab.page;
    await page.goto('/signin');
    await page.getByLabel('Email').fill(member.email);
    await page.getByLabel('Password').fill(member.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await landOn(page, '/projects');
    await page.goto(`/boards/${projectId}`);
    await page.locator('[data-state="live"]').waitFor();
    await page.getByText('you are member').waitFor();
    await page.getByRole('button', { name: 'Create item' }).waitFor();
    await page.evaluate('window.__marker = 1');

    expect(
      (await owner.client.post(`/api/boards/${projectId}/members/${member.accountId}/role`, { role: 'viewer' })).status,
    ).toBe(200);
    await page.getByText('you are viewer').waitFor();
    await page.locator('[data-state="live"]').waitFor();
    expect(await page.getByRole('button', { name: 'Create item' }).count()).toBe(0);

    expect((await owner.client.request('DELETE', `/api/boards/${projectId}/members/${member.accountId}`)).status).toBe(
      204,
    );
    await page.locator('[data-ended]', { hasText: 'You are no longer a member of this board.' }).waitFor();
    await page.locator('[data-state="removed"]').waitFor();
    expect(await page.evaluate('window.__marker')).toBe(1); // no reload happened
    await screenshot(page, 'board-removed');
    expect(tab.problems).toEqual([]);
    await tab.close();
  });
});
