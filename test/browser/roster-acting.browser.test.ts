// The board's Agents panel counts an agent seen acting in the board's events (no heartbeat needed)
// as active, lists it and offers it as a shout's addressee; a heartbeat's item is not shown as
// current once the agent's lease on it has ended.
import { describe, expect, inject, it } from 'vitest';
import { screenshot, useBrowserTabs } from '../support/browser.js';
import { head, newBoard } from '../support/board.js';

const chromium = inject('chromium');

describe.skipIf(!chromium)('the Agents panel from heartbeats and events (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'roster-acting');

  it('lists an agent that acts without heartbeats, and drops a heartbeat item whose lease ended', async () => {
    const board = await newBoard(tabs.server.url);
    const { owner, projectId } = board;
    const quiet = await board.agent('quiet-worker');
    const beating = await board.agent('beating-worker');
    await owner.post(`/api/items/batch?projectId=${projectId}`, {
      items: ['one', 'two', 'three'].map((title) => ({ title })),
    });

    const t = await tabs.tab();
    const { page } = t;
    await t.context.addCookies([...owner.cookies].map(([name, value]) => ({ name, value, url: tabs.server.url })));
    await page.goto(`/boards/${projectId}`);
    await page.locator('.conn.live').waitFor();
    const roster = page.locator('section[aria-label="Agents"]');
    await roster.getByText('No agent has shown up yet', { exact: false }).waitFor();

    // Claims and submits, never a heartbeat.
    const grant = await quiet.post('/api/claim', {});
    expect(grant.status).toBe(200);
    expect((await quiet.post('/api/submit', { leaseId: grant.body.leaseId, head: head(1) })).status).toBe(200);
    const row = roster.locator(`li[data-principal="${quiet.principal}"]`);
    await row.waitFor();
    await expect.poll(() => roster.locator('[data-online]').getAttribute('data-online')).toBe('1');
    expect(await row.locator('.at').innerText()).toMatch(/^active \d+s ago$/);
    expect(await row.getByRole('img').getAttribute('aria-label')).toBe('online');
    const to = page.locator('section[aria-label="Shouts"] select[name="to"] option');
    await expect
      .poll(() => to.evaluateAll((os) => os.map((o) => (o as { value: string }).value)))
      .toContain(quiet.principal);

    // A heartbeat naming the item it holds, then the item is submitted (its lease ends).
    const held = await beating.post('/api/claim', {});
    expect(held.status).toBe(200);
    await beating.post('/api/status/heartbeat', { status: 'working', workId: held.body.workId });
    const beat = roster.locator(`li[data-principal="${beating.principal}"]`);
    await expect.poll(() => beat.locator('.muted').first().innerText()).toBe(`working · ${held.body.workId}`);
    expect((await beating.post('/api/submit', { leaseId: held.body.leaseId, head: head(2) })).status).toBe(200);
    await expect.poll(() => beat.locator('.muted').first().innerText()).toBe(`was on ${held.body.workId}`);
    await screenshot(page, 'roster-acting');
    expect(t.problems).toEqual([]);
  });
});
