// Reordering from an item's page in Chromium: move to top, up and down, each behind a
// confirmation, and the chain the server pulls from follows.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, openPage, startBrowserServer, signUpInPage } from '../support/browser.js';
import { Client, type TestServer } from '../support/server.js';
import { unique } from '../support/temp.js';

const chromium = inject('chromium');

describe.skipIf(!chromium)('reordering the chain from the item page (Chromium)', () => {
  let browser: Browser;
  let server: TestServer;
  beforeAll(async () => {
    [browser, server] = await Promise.all([launchChromium(chromium!), startBrowserServer()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('moves an item to the top, then down and up one place', async () => {
    const tab = await openPage(browser, server);
    const { page } = tab;
    const email = `${unique('reorder')}@example.com`;
    await signUpInPage(page, email);
    const owner = new Client(server.url);
    await owner.post('/api/auth/login', { email, password: 'correct horse battery staple' });
    const projectId = (await owner.get('/api/projects')).body.projects[0].projectId as string;
    await owner.post(`/api/items/batch?projectId=${projectId}`, {
      items: ['first', 'second', 'third'].map((title) => ({ title })),
    });
    const head = async () =>
      (await owner.get(`/api/status?projectId=${projectId}`)).body.chainHead.map((i: { workId: string }) => i.workId);
    expect(await head()).toEqual(['W-1', 'W-2', 'W-3']);

    const moves = page.locator('section[aria-label="Operator moves"]');
    const move = async (label: string, done: string) => {
      await moves.getByRole('button', { name: label, exact: true }).click();
      await moves.getByRole('button', { name: `Yes, ${label.toLowerCase()}` }).click();
      await moves.getByText(done).waitFor();
    };
    await page.goto(`/boards/${projectId}/items/W-3`);
    await move('Move to top', 'Moved to the head of the chain.');
    expect(await head()).toEqual(['W-3', 'W-1', 'W-2']);
    await move('Move down', 'Moved down one place.');
    expect(await head()).toEqual(['W-1', 'W-3', 'W-2']);
    await move('Move up', 'Moved up one place.');
    expect(await head()).toEqual(['W-3', 'W-1', 'W-2']);
    expect(tab.problems).toEqual([]);
    await tab.close();
  });
});
