// At a phone's width (390 px), with names that have no spaces (a board, an agent's token, an
// item's title, a shout), no page is wider than the screen: tables scroll in their own box and
// long names break anywhere. The board's columns stack there, none hidden off to the side.
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

  it('stacks the board’s columns at 390 px: each in full view, none scrolled off to the side', async () => {
    const board = await newBoard(tabs.server.url);
    const { owner, projectId } = board;
    const agent = await board.agent('builder');
    const made = await agent.post('/api/items/batch', {
      items: [
        { ref: 'a', title: 'Schema' },
        { ref: 'b', title: 'Migration', dependsOn: ['a'] },
        { ref: 'c', title: 'Docs' },
      ],
    });
    expect(made.status, made.text).toBe(201);
    expect((await agent.post('/api/claim', { workId: 'W-1' })).status).toBe(200);

    const t = await tabs.tab();
    const { page } = t;
    await t.context.addCookies([...owner.cookies].map(([k, value]) => ({ name: k, value, url: tabs.server.url })));
    await page.setViewportSize({ width: WIDTH, height: 844 });
    await page.goto(`/boards/${projectId}`);
    await page.locator('section.column[data-state="claimed"]').getByText('Schema').waitFor();
    const boxes = (await page.evaluate(`(() => {
      const strip = document.querySelector('.columns');
      return {
        sideways: strip.scrollWidth - strip.clientWidth,
        columns: [...strip.querySelectorAll('section.column')].map((c) => {
          const r = c.getBoundingClientRect();
          return { state: c.dataset.state, left: Math.round(r.left), right: Math.round(r.right), top: Math.round(r.top) };
        }),
      };
    })()`)) as { sideways: number; columns: { state: string; left: number; right: number; top: number }[] };
    expect(boxes.sideways).toBe(0);
    expect(boxes.columns).toHaveLength(8);
    for (const c of boxes.columns) {
      expect(c.left, c.state).toBeGreaterThanOrEqual(0);
      expect(c.right, c.state).toBeLessThanOrEqual(WIDTH);
    }
    const tops = boxes.columns.map((c) => c.top);
    expect(tops).toEqual([...tops].sort((a, b) => a - b)); // one under another, in the board's order
    expect(new Set(tops).size).toBe(8);
    await screenshot(page, 'phone-width-board-columns');
    expect(t.problems).toEqual([]);
  });
});
