// Each view of the operators' console has its heading, and a navigation between them moves focus
// to it, as the board's pages do (ui/heading.ts).
import { describe, expect, inject, it } from 'vitest';
import { screenshot, signerIn, useBrowserTabs } from '../support/browser.js';
import { confirmingSignIn, operatorEmail } from '../support/operators.js';

const chromium = inject('chromium');
const OPERATOR = operatorEmail();
const VIEWS = ['Live', 'Users', 'Overview', 'Money', 'Abuse', 'Audit', 'Feedback'];

describe.skipIf(!chromium)('the console’s headings (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'admin-headings', { OPERATOR_EMAILS: OPERATOR });
  const asOperator = confirmingSignIn(() => tabs.server, OPERATOR, signerIn(OPERATOR));

  it('heads each view with an h1 and focuses it after a navigation', async () => {
    const { page, problems } = await tabs.tab();
    await asOperator(page);
    await page.goto('/admin/live');
    const focused = () =>
      page.evaluate(
        'document.activeElement && document.activeElement.tagName + ":" + document.activeElement.textContent',
      );
    await page.getByRole('heading', { level: 1, name: 'Live' }).waitFor();
    for (const view of [...VIEWS.slice(1), 'Live']) {
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: view, exact: true }).click();
      await expect.poll(focused).toBe(`H1:${view}`);
      expect(await page.locator('main h1').count()).toBe(1);
      expect(await page.title()).toBe(`${view} · Agent Board`);
    }
    await page.goto('/admin/audit');
    await page.getByRole('heading', { level: 1, name: 'Audit' }).waitFor();
    await screenshot(page, 'admin-headings-audit');
    expect(problems).toEqual([]);
  });
});
