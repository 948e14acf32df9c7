// Signing up, out and in through the browser board in Debian's Chromium: the pages' forms, the
// top bar, the registry's message on a failed sign-in, and not one CSP violation on the way.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ERRORS } from '../../src/errors/registry.js';
import {
  landOn,
  launchChromium,
  openPage,
  screenshot,
  startBrowserServer,
  type BrowserPage,
} from '../support/browser.js';
import type { TestServer } from '../support/server.js';
import { unique } from '../support/temp.js';

const chromium = inject('chromium');

describe.skipIf(!chromium)('signing up, out and in (Chromium)', () => {
  let browser: Browser;
  let server: TestServer;
  let tab: BrowserPage;
  let page: Page;
  beforeAll(async () => {
    [browser, server] = await Promise.all([launchChromium(chromium!), startBrowserServer()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
  beforeEach(async () => {
    tab = await openPage(browser, server);
    page = tab.page;
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') await screenshot(page, `failed-${ctx.task.name}`).catch(() => undefined);
    await tab.close();
  });

  const path = () => new URL(page.url()).pathname;
  /** An account signed up over HTTP, not in the page. */
  const signedUpElsewhere = async () => {
    const email = `${unique('browser')}@example.com`;
    const password = 'correct horse battery staple';
    await fetch(`${server.url}/api/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    return { email, password };
  };
  const topbar = () => page.locator('header.topbar');

  it('signs up, lands on the projects page, signs out and back in', async () => {
    const email = `${unique('browser')}@example.com`;
    const password = 'correct horse battery staple';

    await page.goto('/signup');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await landOn(page, '/projects');
    await expect.poll(() => topbar().getByRole('link', { name: email }).isVisible()).toBe(true);
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'projects-signed-in');

    await topbar().getByRole('button', { name: 'Sign out' }).click();
    await landOn(page, '/signin');
    await expect.poll(() => topbar().getByRole('link', { name: email }).count()).toBe(0);

    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await landOn(page, '/projects');
    await expect.poll(() => topbar().getByRole('link', { name: email }).isVisible()).toBe(true);

    // The session is the server's, not the page's memory: a reload keeps it.
    await page.reload();
    await expect.poll(() => topbar().getByRole('link', { name: email }).isVisible()).toBe(true);
    expect(path()).toBe('/projects');
    expect(tab.problems).toEqual([]);
  });

  it('a wrong password shows the registry message in an alert, never the raw envelope', async () => {
    const email = `${unique('browser')}@example.com`;
    const signup = await fetch(`${server.url}/api/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'correct horse battery staple' }),
    });
    expect(signup.status).toBe(201);

    await page.goto('/signin');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = await alert.innerText();
    expect(text).toContain(ERRORS.INVALID_CREDENTIALS.meaning);
    expect(text).not.toContain('{');
    expect(text).not.toContain('"error"');
    expect(await page.locator('body').innerText()).not.toContain('"code"');
    expect(path()).toBe('/signin');
    expect(tab.problems).toEqual([]);
  });

  it('a page that is not signed in is sent to sign in, and comes back after', async () => {
    const { email, password } = await signedUpElsewhere();

    await page.goto('/account/profile');
    await landOn(page, '/signin');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/account/profile');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await landOn(page, '/account/profile');
    expect(tab.problems).toEqual([]);
  });

  it('a confirmation link opened signed out asks to sign in, then confirms the address', async () => {
    const { email, password } = await signedUpElsewhere();
    const link = /https?:\/\/\S+\/verify-email#token=\S+/.exec(
      (await server.mail.next(email, /^Verify your email/)).text,
    )![0];

    await page.goto(new URL(link).pathname + new URL(link).hash);
    await page.getByText('Sign in to the account this address belongs to, and the link confirms it.').waitFor();
    expect(new URL(page.url()).hash).toBe(''); // the token left the address bar
    await screenshot(page, 'verify-email-signed-out');
    await page.getByRole('link', { name: 'Sign in to confirm' }).click();
    await landOn(page, '/signin');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await landOn(page, '/verify-email');
    await page.getByText(`${email} is confirmed.`).waitFor();
    await screenshot(page, 'verify-email-confirmed');
    const me = await page.evaluate(
      async () => (await (await fetch('/api/auth/me')).json()) as { user: { emailVerified: boolean } },
    );
    expect(me.user.emailVerified).toBe(true);
    expect(tab.problems).toEqual([]);
  });

  it('a person who signs up on the way is sent on to the page they asked for', async () => {
    await page.context().clearCookies();
    await page.goto('/account/tokens');
    await landOn(page, '/signin');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await landOn(page, '/signup');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/account/tokens');
    await page.getByLabel('Email').fill(`${unique('browser')}@example.com`);
    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Create account' }).click();
    await landOn(page, '/account/tokens');
    expect(tab.problems).toEqual([]);
  });

  it('the harness does see a CSP violation (an injected inline script)', async () => {
    await page.goto('/signin');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const ran: unknown = await page.evaluate(`(async () => {
      const s = document.createElement('script');
      s.textContent = 'window.inlineRan = true';
      document.body.append(s);
      await new Promise((r) => setTimeout(r, 50));
      return window.inlineRan === true;
    })()`);
    expect(ran).toBe(false);
    await expect.poll(() => tab.cspViolations().length).toBeGreaterThan(0);
    expect(tab.cspViolations().join('\n')).toMatch(/script-src/);
  });
});
