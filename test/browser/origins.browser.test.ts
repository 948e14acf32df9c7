// The board page works wherever `npm start` serves it without PUBLIC_URL: opened at
// http://127.0.0.1:PORT or http://localhost:PORT, on a port other than 8080, its writes pass the
// origin check and its socket is accepted. (Before, the only origin allowed was
// http://localhost:8080, whatever the port: every write and socket was refused.) An address the
// node serves but was not told about is still refused.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { landOn, launchChromium, openPage, screenshot, type BrowserPage, signUpInPage } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { unique } from '../support/temp.js';

const chromium = inject('chromium');

describe.skipIf(!chromium)('origins follow the port without PUBLIC_URL (Chromium)', () => {
  let browser: Browser;
  let server: TestServer;
  let tabs: BrowserPage[] = [];
  beforeAll(async () => {
    // As `npm start` with PORT set and no PUBLIC_URL (an empty value counts as unset); port 0: the
    // system picks one, and the origins follow the port actually taken. Every IPv4 address, so the
    // page can also be opened at an address the node was not told about.
    [browser, server] = await Promise.all([
      launchChromium(chromium!),
      startTestServer({ HOST: '0.0.0.0', PORT: '0', PUBLIC_URL: '' }),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail')
      for (const [i, t] of tabs.entries()) await screenshot(t.page, `failed-origins-${i}`).catch(() => undefined);
    await Promise.all(tabs.map((t) => t.close()));
    tabs = [];
  });
  const tab = async (url: string) => {
    const t = await openPage(browser, { url });
    tabs.push(t);
    return t;
  };

  it.each(['127.0.0.1', 'localhost'])(
    'at http://%s:PORT the page signs up, its socket goes live and it creates items',
    async (host) => {
      expect(server.server.port).not.toBe(8080);
      const { page, problems } = await tab(`http://${host}:${server.server.port}`);
      await signUpInPage(page, `${unique('origin')}@example.com`);
      await page.locator('main a[href^="/boards/"]').first().click();
      await page.locator('.conn[data-state="live"]').waitFor();
      await page.getByLabel('Paste a list').fill(['First from this origin', 'Second'].join('\n'));
      await page.getByRole('button', { name: 'Create all' }).click();
      await page.getByText('Created 2 items (W-1…W-2).').waitFor();
      await page.locator('section.column[data-state="ready"] a.card[data-work-id="W-2"]').waitFor();
      expect(problems).toEqual([]);
    },
  );

  it('at an address the node was not told about, the signup is refused (403 CSRF_REJECTED)', async () => {
    const { page } = await tab(`http://127.0.0.2:${server.server.port}`);
    const refused = page.waitForResponse((r) => r.url().endsWith('/api/auth/signup'));
    await page.goto('/signup');
    await page.getByLabel('Email').fill(`${unique('elsewhere')}@example.com`);
    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Create account' }).click();
    const res = await refused;
    expect(res.status()).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CSRF_REJECTED');
    await expect(landOn(page, '/projects', 1500)).rejects.toThrow(/alert|expected to land/);
  });
});
