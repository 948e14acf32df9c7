// The browser tests' harness: Debian's Chromium driven by playwright-core (no browser download),
// a test server whose PUBLIC_URL is the very origin the browser opens (so its writes pass the
// CSRF origin rule), pages that record every CSP violation and uncaught error, and screenshots
// under test-results/.
import { mkdir } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { Store } from '../../store/ports/store.js';
import { startTestServer, type TestServer } from './server.js';
import { until } from './until.js';

/** Where screenshots land (ignored by git). */
export const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

/** Headless Chromium from `executablePath` (inject('chromium')): no sandbox, GPU or background traffic. */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
    ],
    timeout: 20_000,
  });
}

/** A port nothing listens on at `host` right now. */
async function freePort(host: string): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, host, resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * A test server the browser can write to. The page's writes carry Origin: http://HOST:PORT, and the
 * server accepts only its PUBLIC_URL's origin, so both must be known before it starts: the port is
 * picked free first and passed as PORT with PUBLIC_URL. The host is a random address in
 * 127.0.0.0/8 (all loopback on Linux) rather than 127.0.0.1, because uWebSockets binds with
 * SO_REUSEPORT: had another suite's port-0 server on 127.0.0.1 taken the probed port meanwhile,
 * ours would silently share it instead of failing; on an address of its own nothing else listens.
 */
export async function startBrowserServer(env: Record<string, string> = {}, store?: Store): Promise<TestServer> {
  for (let attempt = 1; ; attempt++) {
    const host = `127.${1 + rand(254)}.${rand(256)}.${1 + rand(254)}`;
    const port = await freePort(host);
    const origin = `http://${host}:${port}`;
    try {
      const server = await startTestServer({ HOST: host, PORT: String(port), PUBLIC_URL: origin, ...env }, store);
      return { ...server, url: origin };
    } catch (e) {
      if (attempt >= 3 || !/cannot listen/.test(String(e))) throw e;
    }
  }
}

const rand = (n: number): number => Math.floor(Math.random() * n);

export interface BrowserPage {
  context: BrowserContext;
  page: Page;
  /** Every CSP violation, uncaught page error and failed script/style load, as it happened. */
  problems: string[];
  /** Only the CSP violations among `problems`. */
  cspViolations(): string[];
  close(): Promise<void>;
}

/**
 * A fresh context (its own cookies) and page against `server`, whose relative URLs resolve there.
 * CSP violations are caught twice: Chromium's console report, and the document's
 * securitypolicyviolation event (installed through the debugger protocol, which the CSP does not govern).
 */
export async function openPage(browser: Browser, server: { url: string }): Promise<BrowserPage> {
  const context = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(10_000);
  context.setDefaultNavigationTimeout(15_000);
  // (A string: it runs in the page, and this project's TypeScript has no DOM types.)
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (e) =>
    console.error('Content Security Policy violation: ' + e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline') + ' (' + e.sourceFile + ':' + e.lineNumber + ')'));`);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => {
    if (['script', 'stylesheet', 'document'].includes(r.resourceType()))
      problems.push(`requestfailed: ${r.resourceType()} ${r.url()} ${r.failure()?.errorText ?? ''}`);
  });
  return {
    context,
    page,
    problems,
    cspViolations: () => problems.filter((p) => /Content Security Policy/i.test(p)),
    close: () => context.close(),
  };
}

/**
 * Waits until the page shows `pathname`; if an alert appears first, fails at once with its text
 * (a refused write says why, instead of a navigation timeout).
 */
export async function landOn(page: Page, pathname: string, ms = 10_000): Promise<void> {
  const landed = () => new URL(page.url()).pathname === pathname;
  await until(
    async () => {
      if (landed()) return true;
      const alert = page.getByRole('alert').first();
      // (The page may have landed while the alert was looked for: an alert on the page asked for is its own.)
      if ((await alert.isVisible()) && !landed())
        throw new Error(
          `expected to land on ${pathname}, stayed on ${page.url()} with an alert: ${(await alert.innerText()).replace(/\s+/g, ' ')}`,
        );
      return false;
    },
    { timeout: ms, what: () => `landing on ${pathname}, still on ${page.url()}` },
  );
}

/** Saves a full-page PNG as test-results/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const path = `${RESULTS_DIR}${name.replace(/[^\w.-]+/g, '-')}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Signs up through the page's form and waits for the boards listing. */
export async function signUpInPage(
  page: Page,
  email: string,
  password = 'correct horse battery staple',
): Promise<void> {
  await page.goto('/signup');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await landOn(page, '/projects');
}

/**
 * A suite's Chromium and server (started with `env`), and `tab()`: a fresh context and page per
 * call, all closed after each test and screenshotted first (failed-<label>-<i>.png) when it failed.
 * Call inside the suite's describe.
 */
export function useBrowserTabs(
  executablePath: string,
  label: string,
  env: Record<string, string> = {},
): { readonly server: TestServer; tab(): Promise<BrowserPage> } {
  let browser: Browser | undefined;
  let server: TestServer | undefined;
  let tabs: BrowserPage[] = [];
  beforeAll(async () => {
    [browser, server] = await Promise.all([launchChromium(executablePath), startBrowserServer(env)]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') {
      for (const [i, t] of tabs.entries()) await screenshot(t.page, `failed-${label}-${i}`).catch(() => undefined);
    }
    await Promise.all(tabs.map((t) => t.close()));
    tabs = [];
  });
  return {
    get server() {
      return server!;
    },
    async tab() {
      const t = await openPage(browser!, server!);
      tabs.push(t);
      return t;
    },
  };
}

/**
 * Signs a page in as `email` (signing it up the first time it is asked), as a person would at
 * /signin: for suites whose pages act as one account, an operator say.
 */
export function signerIn(email: string, password = 'correct horse battery staple'): (page: Page) => Promise<void> {
  let signedUp = false;
  return async (page) => {
    if (!signedUp) {
      signedUp = true;
      return signUpInPage(page, email, password);
    }
    await page.goto('/signin');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await landOn(page, '/projects');
  };
}
