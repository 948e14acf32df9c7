// Refusals shown to a person are said for people: a pasted list's line references are checked in
// the page before anything is sent, a server refusal reads as a sentence with its code beside it,
// and New items is disabled while the board is paused, saying why and how to resume.
import { describe, expect, inject, it } from 'vitest';
import { screenshot, useBrowserTabs } from '../support/browser.js';
import { newBoard } from '../support/board.js';

const chromium = inject('chromium');

describe.skipIf(!chromium)('refusals said for people on the board (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'refusals-for-people');

  it('checks pasted line references, words refusals for people, and disables New items while paused', async () => {
    const { owner, projectId } = await newBoard(tabs.server.url);
    const t = await tabs.tab();
    const { page } = t;
    await t.context.addCookies([...owner.cookies].map(([name, value]) => ({ name, value, url: tabs.server.url })));
    await page.goto(`/boards/${projectId}`);
    await page.locator('.conn.live').waitFor();
    const newItems = page.locator('section[aria-label="New items"]');
    const items = async () => (await owner.get(`/api/items?projectId=${projectId}`)).body.items.length as number;

    // A line the list does not have: refused in the page, nothing sent.
    await newItems.getByLabel('Paste a list').fill(['Design', 'Build | after 7', 'Ship'].join('\n'));
    await newItems.getByRole('button', { name: 'Create all' }).click();
    const note = newItems.locator('.note.error');
    await note.waitFor();
    expect(await note.locator('strong').innerText()).toBe('Line 2 says “after 7”; the list has 3 lines.');
    expect(await items()).toBe(0);

    // A work id the board does not have: the server refuses; the page says it for people.
    await newItems.getByLabel('Paste a list').fill(['Design | after W-99', 'Ship'].join('\n'));
    await newItems.getByRole('button', { name: 'Create all' }).click();
    await expect.poll(() => note.locator('code').innerText()).toBe('CROSS_PROJECT_FOLD');
    expect(await note.locator('strong').innerText()).toBe('A dependency names an item that is not on this board.');
    expect(await note.innerText()).not.toContain('line-');

    // Paused: the banner has no error code, New items is disabled and says how to resume.
    expect((await owner.request('PATCH', `/api/projects/${projectId}`, { json: { paused: true } })).status).toBe(200);
    const banner = page.locator('[data-paused]');
    await banner.waitFor();
    expect(await banner.innerText()).not.toContain('BOARD_PAUSED');
    await newItems.locator('[data-paused-note]').waitFor();
    expect(await newItems.locator('[data-paused-note]').innerText()).toContain('Resume');
    expect(await newItems.getByRole('button', { name: 'Create item' }).isDisabled()).toBe(true);
    expect(await newItems.getByLabel('Title').isDisabled()).toBe(true);
    await screenshot(page, 'refusals-paused-new-items');

    // A refusal on the item page while paused reads for people.
    expect((await owner.request('PATCH', `/api/projects/${projectId}`, { json: { paused: false } })).status).toBe(200);
    expect((await owner.post(`/api/items?projectId=${projectId}`, { title: 'One' })).status).toBe(201);
    expect((await owner.request('PATCH', `/api/projects/${projectId}`, { json: { paused: true } })).status).toBe(200);
    await page.goto(`/boards/${projectId}/items/W-1`);
    const moves = page.locator('section[aria-label="Operator moves"]');
    await moves.getByRole('button', { name: 'Block', exact: true }).click();
    await moves.getByRole('button', { name: 'Yes, block' }).click();
    const refusal = moves.locator('.note.error');
    await refusal.waitFor();
    expect(await refusal.locator('strong').innerText()).toBe('This board is paused, so nothing was changed.');
    expect(await refusal.innerText()).not.toMatch(/user:|\d{4}-\d\d-\d\dT/);
    await screenshot(page, 'refusals-paused-item');
    expect(t.problems.filter((p) => !p.includes('409') && !p.includes('400'))).toEqual([]);
  });
});
