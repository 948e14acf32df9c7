// Move up from an item's page on a chain longer than a reorder takes (500 ids) and longer than a
// page of GET /api/items: the page works the move out from the whole chain, and the chain the
// server pulls from follows.
import { describe, expect, inject, it } from 'vitest';
import { screenshot, useBrowserTabs } from '../support/browser.js';
import { newBoard } from '../support/board.js';
import type { Client } from '../support/server.js';
import { chainOrder } from '../../web/src/chain.js';

const chromium = inject('chromium');
const READY = 1_200;

async function chain(owner: Client, projectId: string): Promise<string[]> {
  const items: { workId: string; rank: number | null; priority: number }[] = [];
  let after = '';
  do {
    const page = await owner.get(`/api/items?projectId=${projectId}&state=ready&limit=1000${after}`);
    items.push(...page.body.items);
    after = page.body.next ? `&after=${encodeURIComponent(page.body.next)}` : '';
  } while (after);
  return items.sort(chainOrder).map((i) => i.workId);
}

describe.skipIf(!chromium)('moving an item in a long chain from its page (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'reorder-long-chain');

  it('moves the right items, near the head and deep in the chain', { timeout: 180_000 }, async () => {
    const { owner, projectId } = await newBoard(tabs.server.url);
    for (let i = 0; i < READY; i += 400) {
      const items = Array.from({ length: 400 }, (_, j) => ({ title: `Item ${i + j + 1}` }));
      expect((await owner.post(`/api/items/batch?projectId=${projectId}`, { items })).status).toBe(201);
    }
    // An item outside the first page of 500 heads the chain.
    expect((await owner.post(`/api/items/reorder?projectId=${projectId}`, { workIds: ['W-1001'] })).status).toBe(200);
    const before = await chain(owner, projectId);
    expect(before.slice(0, 3)).toEqual(['W-1001', 'W-1', 'W-2']);

    const t = await tabs.tab();
    const { page } = t;
    await t.context.addCookies([...owner.cookies].map(([name, value]) => ({ name, value, url: tabs.server.url })));
    const moveUp = async (workId: string) => {
      await page.goto(`/boards/${projectId}/items/${workId}`);
      const moves = page.locator('section[aria-label="Operator moves"]');
      await moves.getByRole('button', { name: 'Move up', exact: true }).click();
      await moves.getByRole('button', { name: 'Yes, move up' }).click();
      await moves.locator('.note').first().waitFor();
      return moves.locator('.note').first().innerText();
    };

    expect(await moveUp('W-2')).toBe('Moved up one place.');
    const near = await chain(owner, projectId);
    expect(near.slice(0, 4)).toEqual(['W-1001', 'W-2', 'W-1', 'W-3']);

    // 1,150th in the chain: the reorder names 1,150 ids, sent in parts.
    expect(await moveUp('W-1150')).toBe('Moved up one place.');
    await screenshot(page, 'reorder-long-chain-deep');
    const deep = await chain(owner, projectId);
    const expected = [...near];
    const at = expected.indexOf('W-1150');
    expected.splice(at - 1, 2, 'W-1150', expected[at - 1]!);
    expect(deep).toEqual(expected);
    expect(t.problems).toEqual([]);
  });

  it('moves a card 600th in the chain by Alt+↑ on the board', { timeout: 120_000 }, async () => {
    const { owner, projectId } = await newBoard(tabs.server.url);
    for (let i = 0; i < 600; i += 300) {
      const items = Array.from({ length: 300 }, (_, j) => ({ title: `Step ${i + j + 1}` }));
      expect((await owner.post(`/api/items/batch?projectId=${projectId}`, { items })).status).toBe(201);
    }
    const t = await tabs.tab();
    const { page } = t;
    await t.context.addCookies([...owner.cookies].map(([name, value]) => ({ name, value, url: tabs.server.url })));
    await page.goto(`/boards/${projectId}`);
    await page.locator('a.card[data-work-id="W-1"]').focus();
    const focused = () => page.evaluate<string | null>(`document.activeElement?.getAttribute('data-work-id') ?? null`);
    // End, then one more down: the column shows its next page; on to the chain's 600th card.
    for (let i = 0; i < 60 && (await focused()) !== 'W-600'; i++) {
      await page.keyboard.press('End');
      await page.keyboard.press('ArrowDown');
    }
    expect(await focused()).toBe('W-600');
    await page.keyboard.press('Alt+ArrowUp');
    await expect
      .poll(async () => (await chain(owner, projectId)).slice(597, 600), { timeout: 15_000 })
      .toEqual(['W-598', 'W-600', 'W-599']);
    expect((await chain(owner, projectId)).slice(0, 3)).toEqual(['W-1', 'W-2', 'W-3']);
    expect(t.problems).toEqual([]);
  });
});
