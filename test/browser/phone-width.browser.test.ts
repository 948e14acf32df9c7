// At a phone's width (390 px), with names that have no spaces (a board, an agent's token, an
// item's title, a shout), no page is wider than the screen: tables scroll in their own box and
// long names break anywhere.
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { screenshot, useBrowserTabs } from '../support/browser.js';
import { newBoard } from '../support/board.js';

const chromium = inject('chromium');
const WIDTH = 390;

describe.skipIf(!chromium)('pages at a phone’s width with long names (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'phone-width');

  it('keeps Your boards, Members, the board, an item and Insights within 390 px', { timeout: 60_000 }, async () => {
    const board = await newBoard(tabs.server.url);
    const { owner, projectId } = board;
    const name = 'Reconciliation' + 'X'.repeat(66);
    expect((await owner.request('PATCH', `/api/projects/${projectId}`, { json: { name } })).status).toBe(200);
    const agent = await board.agent('builder-for-the-payments-reconciliation-service-' + 'y'.repeat(30));
    const made = await agent.post('/api/items/batch', {
      items: [
        { ref: 'a', title: 'Implement' + 'Z'.repeat(190) },
        { ref: 'b', title: 'Short one', dependsOn: ['a'] },
      ],
    });
    expect(made.status, made.text).toBe(201);
    const grant = await agent.post('/api/claim', {});
    await agent.post('/api/shouts', { text: `I am on ${grant.body.workId}: ${'W'.repeat(120)}` });

    const t = await tabs.tab();
    const { page } = t;
    await t.context.addCookies([...owner.cookies].map(([k, value]) => ({ name: k, value, url: tabs.server.url })));
    await page.setViewportSize({ width: WIDTH, height: 844 });
    const width = (p: Page) => p.evaluate('document.documentElement.scrollWidth') as Promise<number>;
    const check = async (path: string, ready: string, shot: string) => {
      await page.goto(path);
      await page.getByText(ready, { exact: false }).first().waitFor();
      await page.waitForTimeout(300);
      await screenshot(page, shot);
      if ((await width(page)) > WIDTH)
        console.log(
          shot,
          await page.evaluate(
            `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > ${WIDTH} + 1).slice(0, 8).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join(' | ')`,
          ),
        );
      return width(page);
    };
    expect(await check('/projects', 'Your boards', 'phone-width-projects')).toBe(WIDTH);
    expect(await check(`/boards/${projectId}/members`, 'Members', 'phone-width-members')).toBe(WIDTH);
    expect(await check(`/boards/${projectId}`, 'Short one', 'phone-width-board')).toBe(WIDTH);
    expect(await check(`/boards/${projectId}/items/W-1`, 'History', 'phone-width-item')).toBe(WIDTH);
    expect(await check(`/boards/${projectId}/insights`, 'Reconciliation', 'phone-width-insights')).toBe(WIDTH);
    expect(t.problems).toEqual([]);
  });
});
