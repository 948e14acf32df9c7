// Issue 42, finding 1, in Chromium: a stranger who signs up first with an address listed in
// OPERATOR_EMAILS, and never confirms it, is signed in like anyone else; /admin shows them exactly
// what an unknown path shows, and the page's own route to the console finds nothing. Once the
// address is confirmed with the link mailed to it, the same browser gets the console.
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { screenshot, signUpInPage, useBrowserTabs } from '../support/browser.js';
import { operatorEmail } from '../support/operators.js';
import { signedInAs, verifyEmail } from '../support/verify-email.js';

const chromium = inject('chromium');
const LISTED = operatorEmail();

/** What the browser shows at `path` when it opens it: the status and the text on the page, its request id taken out. */
async function shown(page: Page, path: string): Promise<{ status: number | undefined; text: string }> {
  const res = await page.goto(path);
  const text = await page.locator('body').innerText();
  return { status: res?.status(), text: text.replace(/"requestId":"[^"]*"/, '"requestId":""') };
}

describe.skipIf(!chromium)('the operator console to an unconfirmed listed address (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'admin-unconfirmed', { OPERATOR_EMAILS: LISTED });

  it('shows the unknown path’s page at /admin until the address is confirmed', async () => {
    const { page, problems } = await tabs.tab();
    await signUpInPage(page, LISTED);

    const unknown = await shown(page, '/no-such-page');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('"code":"NOT_FOUND"');
    for (const path of ['/admin', '/admin/users']) expect(await shown(page, path), path).toEqual(unknown);
    await page.goto('/admin');
    await screenshot(page, 'admin-unconfirmed');
    expect(problems).toEqual([]);

    // The page's own route to /admin (a link followed in the page) finds nothing either: the
    // console's code is refused to it (those failed loads are the refusal), and it says Not found.
    await page.goto('/projects');
    await page.evaluate(`history.pushState(null, '', '/admin'); dispatchEvent(new PopStateEvent('popstate'))`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await screenshot(page, 'admin-unconfirmed-in-page');
    expect(problems.filter((p) => !/^requestfailed: (script|stylesheet) \S+\/admin\/assets\//.test(p))).toEqual([]);
    problems.length = 0;

    // The link mailed to the address is followed: the same browser, signed in as before, gets the console.
    await verifyEmail(tabs.server, LISTED, await signedInAs(tabs.server.url, LISTED, 'correct horse battery staple'));
    const opened = await page.goto('/admin');
    expect(opened?.status()).toBe(200);
    await page.getByRole('link', { name: 'Audit' }).waitFor();
    expect(problems).toEqual([]);
  });
});
