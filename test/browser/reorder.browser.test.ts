// Reordering from an item's page in Chromium: move to top, up and down, each behind a
// confirmation, and the chain the server pulls from follows; offered only where the order matters
// (a pending or ready item), not on a claimed, done or cancelled one.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, openPage, startBrowserServer, signUpInPage } from '../support/browser.js';
import { Client, type TestServer } from '../support/server.js';
import { head as commit } from '../support/board.js';
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

  it('offers Move to top on pending and ready items only', async () => {
    const tab = await openPage(browser, server);
    const { page } = tab;
    const email = `${unique('reorder-where')}@example.com`;
    await signUpInPage(page, email);
    const owner = new Client(server.url);
    await owner.post('/api/auth/login', { email, password: 'correct horse battery staple' });
    const projectId = (await owner.get('/api/projects')).body.projects[0].projectId as string;
    const made = await owner.post(`/api/items/batch?projectId=${projectId}`, {
      items: [
        { ref: 'a', title: 'finished' },
        { ref: 'b', title: 'in hand' },
        { ref: 'c', title: 'ready' },
        { ref: 'd', title: 'waits on ready', dependsOn: ['c'] },
        { ref: 'e', title: 'dropped' },
      ],
    });
    expect(made.status, made.text).toBe(201);
    const token = await owner.post('/api/accounts/tokens', {
      name: 'builder',
      scope: 'workspace',
      projectId,
      role: 'member',
    });
    const agent = new Client(server.url, { authorization: `Bearer ${token.body.secret}` });
    const done = await agent.post('/api/claim', { workId: 'W-1' });
    expect((await agent.post('/api/submit', { leaseId: done.body.leaseId, head: commit(1) })).body.state).toBe('done');
    expect((await agent.post('/api/claim', { workId: 'W-2' })).status).toBe(200);
    const cancelled = await owner.post(`/api/items/W-5/state?projectId=${projectId}`, { action: 'cancel' });
    expect(cancelled.status, cancelled.text).toBe(200);

    const moves = page.locator('section[aria-label="Operator moves"]');
    for (const [workId, state, offered] of [
      ['W-1', 'done', false],
      ['W-2', 'claimed', false],
      ['W-3', 'ready', true],
      ['W-4', 'pending', true],
      ['W-5', 'cancelled', false],
    ] as const) {
      await page.goto(`/boards/${projectId}/items/${workId}`);
      await page.getByText(new RegExp(`^${state.replace('_', ' ')} · P`)).waitFor();
      await moves.getByRole('button').first().waitFor();
      expect(await moves.getByRole('button', { name: 'Move to top' }).count(), `${workId} ${state}`).toBe(
        offered ? 1 : 0,
      );
    }
    expect(tab.problems).toEqual([]);
    await tab.close();
  });
});
