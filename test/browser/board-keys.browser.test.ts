// The board by hand, in Debian's Chromium: an operator drags ready cards to reorder the priority
// chain, and works the board by keyboard alone (Tab into the cards, arrows between them and across
// columns, a visible focus ring, Alt+↑ and Alt+Home to reorder, Enter to open a card, and an
// operator move on its page), the server's chain and states following each step.
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { screenshot, useBrowserTabs } from '../support/browser.js';
import { head, newBoard, type TestBoard } from '../support/board.js';

const chromium = inject('chromium');

const column = (page: Page, state: string) => page.locator(`section.column[data-state="${state}"]`);
const card = (page: Page, workId: string) => page.locator(`a.card[data-work-id="${workId}"]`);
const onBoard = (projectId: string, path: string) => `${path}${path.includes('?') ? '&' : '?'}projectId=${projectId}`;
const readyOrder = (page: Page) =>
  column(page, 'ready')
    .locator('a.card')
    .evaluateAll((els) => els.map((el) => el.getAttribute('data-work-id')));
/** The focused card's work id, or the focused element's text. (A string: it runs in the page, and the tests have no DOM types.) */
const focused = (page: Page) =>
  page.evaluate<string | null>(
    `document.activeElement?.getAttribute('data-work-id') ?? document.activeElement?.textContent ?? null`,
  );

describe.skipIf(!chromium)('the board by hand (Chromium)', () => {
  const harness = useBrowserTabs(chromium!, 'keys');

  /** A board of `n` ready items (W-1…W-n, one priority, so the chain starts in creation order), open in the owner's tab. */
  async function openWith(
    n: number,
  ): Promise<{ board: TestBoard; page: Page; problems: string[]; chain: () => Promise<string[]> }> {
    const board = await newBoard(harness.server.url);
    const res = await board.owner.post(onBoard(board.projectId, '/api/items/batch'), {
      items: Array.from({ length: n }, (_, i) => ({ title: `Step ${i + 1}` })),
    });
    expect(res.status).toBe(201);
    const { page, context, problems } = await harness.tab();
    await context.addCookies(
      [...board.owner.cookies].map(([name, value]) => ({ name, value, url: harness.server.url })),
    );
    await page.goto(`/boards/${board.projectId}`);
    await page.locator('.conn[data-state="live"]').waitFor();
    await card(page, `W-${n}`).waitFor();
    const chain = async () =>
      (await board.owner.get(onBoard(board.projectId, '/api/status'))).body.chainHead.map(
        (h: { workId: string }) => h.workId,
      ) as string[];
    return { board, page, problems, chain };
  }

  it('reorders the chain by dragging a ready card above or below another', async () => {
    const { page, problems, chain } = await openWith(5);
    expect(await card(page, 'W-4').getAttribute('draggable')).toBe('true');

    await card(page, 'W-4').dragTo(card(page, 'W-1'), { targetPosition: { x: 20, y: 4 } });
    await expect.poll(chain).toEqual(['W-4', 'W-1', 'W-2', 'W-3', 'W-5']);
    await expect.poll(() => readyOrder(page)).toEqual(['W-4', 'W-1', 'W-2', 'W-3', 'W-5']);

    const box = (await card(page, 'W-5').boundingBox())!;
    await card(page, 'W-1').dragTo(card(page, 'W-5'), { targetPosition: { x: 20, y: box.height - 4 } });
    await expect.poll(chain).toEqual(['W-4', 'W-2', 'W-3', 'W-5', 'W-1']);
    await expect.poll(() => readyOrder(page)).toEqual(['W-4', 'W-2', 'W-3', 'W-5', 'W-1']);
    expect(problems).toEqual([]);
  });

  it('works by keyboard: Tab into the cards, arrows between them with a visible focus, Alt+↑ and Alt+Home reorder, Enter opens, and the item page acts', async () => {
    const { board, page, problems, chain } = await openWith(4);
    const agent = await board.agent('finisher');
    const grant = await agent.post('/api/claim', { workId: 'W-4' });
    expect((await agent.post('/api/submit', { leaseId: grant.body.leaseId, head: head(4) })).status).toBe(200);
    await column(page, 'done').locator('a.card[data-work-id="W-4"]').waitFor();

    // Tab from the top of the page until a card has the focus: one card is the tab stop, the chain's head.
    for (
      let i = 0;
      i < 30 && !(await page.evaluate<boolean>(`document.activeElement?.classList.contains('card') === true`));
      i++
    )
      await page.keyboard.press('Tab');
    await expect.poll(() => focused(page)).toBe('W-1');
    const ring = await card(page, 'W-1').evaluate((el) => {
      const style = el.ownerDocument.defaultView!.getComputedStyle(el);
      return { style: style.outlineStyle, width: style.outlineWidth };
    });
    expect(ring.style).not.toBe('none');
    expect(parseFloat(ring.width)).toBeGreaterThanOrEqual(2);
    expect(await column(page, 'ready').locator('a.card[tabindex="0"]').count()).toBe(1);

    await page.keyboard.press('ArrowDown');
    await expect.poll(() => focused(page)).toBe('W-2');
    await screenshot(page, 'board-keyboard-focus');
    await page.keyboard.press('ArrowRight'); // the next column with cards: Done
    await expect.poll(() => focused(page)).toBe('W-4');
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => focused(page)).toBe('W-1');
    await page.keyboard.press('End');
    await expect.poll(() => focused(page)).toBe('W-3');

    await page.keyboard.press('Alt+ArrowUp');
    await expect.poll(chain).toEqual(['W-1', 'W-3', 'W-2']);
    await expect.poll(() => readyOrder(page)).toEqual(['W-1', 'W-3', 'W-2']);
    await expect.poll(() => focused(page)).toBe('W-3');
    await page.keyboard.press('Alt+Home');
    await expect.poll(chain).toEqual(['W-3', 'W-1', 'W-2']);
    await expect.poll(() => readyOrder(page)).toEqual(['W-3', 'W-1', 'W-2']);
    await expect.poll(() => focused(page)).toBe('W-3');

    // Enter opens the card; on its page the operator blocks it with the keyboard alone.
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/boards/${board.projectId}/items/W-3`);
    await page.getByRole('button', { name: 'Block', exact: true }).waitFor();
    for (let i = 0; i < 40 && (await focused(page)) !== 'Block'; i++) await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('Block');
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('Yes, block');
    await page.keyboard.press('Enter');
    await expect
      .poll(async () => (await board.owner.get(onBoard(board.projectId, '/api/items/W-3'))).body.state)
      .toBe('blocked');
    await page.goBack();
    await column(page, 'blocked').locator('a.card[data-work-id="W-3"]').waitFor();
    expect(problems).toEqual([]);
  });
});
