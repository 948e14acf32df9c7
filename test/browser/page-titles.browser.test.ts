// Each page names itself in the tab title ("My board · Agent Board", "Tokens · Account · Agent
// Board"), and a navigation in the page moves focus to the new page's heading.
import { describe, expect, inject, it } from 'vitest';
import { signUpInPage, useBrowserTabs } from '../support/browser.js';
import { unique } from '../support/temp.js';

const chromium = inject('chromium');

describe.skipIf(!chromium)('page titles and focus on navigation (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'page-titles');

  it('titles each page and focuses its heading after a navigation', async () => {
    const { page, problems } = await tabs.tab();
    await signUpInPage(page, `${unique('titles')}@example.com`);
    const focusedHeading = () =>
      page.evaluate(
        'document.activeElement && document.activeElement.tagName + ":" + document.activeElement.textContent',
      );

    await page.goto('/projects');
    await expect.poll(() => page.title()).toBe('Your boards · Agent Board');

    await page.locator('main a[href^="/boards/"]').first().click();
    await expect.poll(() => page.title()).toBe('My board · Agent Board');
    await expect.poll(focusedHeading).toBe('H1:My board');

    await page.locator('a[href="/account/profile"]').click();
    await expect.poll(() => page.title()).toBe('Profile · Account · Agent Board');
    await page.locator('nav[aria-label="Account sections"] a[href="/account/tokens"]').click();
    await expect.poll(() => page.title()).toBe('Tokens · Account · Agent Board');
    await expect.poll(focusedHeading).toBe('H1:Account');

    await page.goBack();
    await expect.poll(() => page.title()).toBe('Profile · Account · Agent Board');
    expect(problems).toEqual([]);
  });
});
