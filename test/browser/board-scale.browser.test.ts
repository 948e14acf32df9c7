// The board at scale, in Debian's Chromium: a 10,000-item board opens (first cards shown, every
// count right) within OPEN_BUDGET_MS and its columns load more cards as they scroll; a long shout
// feed shows the newest first and older ones as it scrolls.
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { screenshot, useBrowserTabs } from '../support/browser.js';
import { head, newBoard } from '../support/board.js';

const chromium = inject('chromium');

const ITEMS = 10_000;
const DONE = 60;
/**
 * How long the 10,000-item board may take to open, from navigation to its first cards and counts.
 * Measured at 1.7 s on a shared 2-core machine (the fleet of other suites idle); the bound leaves room for a loaded CI runner.
 */
const OPEN_BUDGET_MS = 8000;
const PAGE = 30;

const column = (page: Page, state: string) => page.locator(`section.column[data-state="${state}"]`);
const onBoard = (projectId: string, path: string) => `${path}${path.includes('?') ? '&' : '?'}projectId=${projectId}`;

describe.skipIf(!chromium)('the board at scale (Chromium)', () => {
  const harness = useBrowserTabs(chromium!, 'scale');

  it(
    `opens a ${ITEMS.toLocaleString('en')}-item board within ${OPEN_BUDGET_MS} ms, each column counted, and loads more cards as a column scrolls`,
    { timeout: 240_000 },
    async () => {
      const board = await newBoard(harness.server.url);
      const { owner, projectId } = board;
      const agent = await board.agent('worker');
      // Every third item waits on the one before it; a few dozen get done, newest last.
      for (let i = 0; i < ITEMS; i += 500) {
        const items = Array.from({ length: 500 }, (_, j) => ({
          ref: `r${i + j}`,
          title: `Item ${i + j + 1}`,
          priority: (i + j) % 5,
          dependsOn: (i + j) % 3 === 2 ? [`r${i + j - 1}`] : [],
        }));
        expect((await agent.post('/api/items/batch', { items })).status).toBe(201);
      }
      for (let i = 0; i < DONE; i++) {
        const grant = await agent.post('/api/claim', {});
        expect((await agent.post('/api/submit', { leaseId: grant.body.leaseId, head: head(i + 1) })).status).toBe(200);
      }
      const status = (await owner.get(onBoard(projectId, '/api/status'))).body;

      const { page, context, problems } = await harness.tab();
      await context.addCookies([...owner.cookies].map(([name, value]) => ({ name, value, url: harness.server.url })));
      await page.goto('/projects');
      const started = Date.now();
      await page.goto(`/boards/${projectId}`);
      await column(page, 'ready')
        .locator('a.card')
        .first()
        .waitFor({ timeout: OPEN_BUDGET_MS * 2 });
      const opened = Date.now() - started;
      console.log(`${ITEMS} items: first cards shown ${opened} ms after navigation (budget ${OPEN_BUDGET_MS} ms)`);
      expect(opened).toBeLessThanOrEqual(OPEN_BUDGET_MS);
      for (const [state, n] of Object.entries(status.counts as Record<string, number>))
        expect(await column(page, state).locator('.count').getAttribute('data-count'), state).toBe(String(n));
      expect(status.counts.ready).toBeGreaterThan(PAGE * 3);

      // A page of cards per column; the most relevant first: the chain's head, the newest done.
      const ready = column(page, 'ready').locator('a.card');
      expect(await ready.count()).toBe(PAGE);
      expect(await ready.evaluateAll((els) => els.slice(0, 10).map((el) => el.getAttribute('data-work-id')))).toEqual(
        status.chainHead.map((h: { workId: string }) => h.workId),
      );
      const done = (await owner.get(onBoard(projectId, '/api/items?state=done&limit=1000'))).body.items as {
        workId: string;
        updatedAt: string;
      }[];
      const newest = [...done].sort(
        (a, b) => b.updatedAt.localeCompare(a.updatedAt) || Number(b.workId.slice(2)) - Number(a.workId.slice(2)),
      );
      expect(
        await column(page, 'done')
          .locator('a.card')
          .evaluateAll((els) => els.map((el) => el.getAttribute('data-work-id'))),
      ).toEqual(newest.slice(0, PAGE).map((i) => i.workId));
      expect(await column(page, 'ready').locator('[data-more]').innerText()).toContain(
        `${PAGE} of ${status.counts.ready.toLocaleString('en')}`,
      );
      await screenshot(page, 'board-10000');

      // Scrolling the Ready column to its end loads the next page, twice, in chain order.
      for (const want of [PAGE * 2, PAGE * 3]) {
        await column(page, 'ready')
          .locator('.column-cards')
          .evaluate((el) => el.scrollTo(0, el.scrollHeight));
        await expect.poll(() => ready.count()).toBe(want);
      }
      const shown = await ready.evaluateAll((els) => els.map((el) => el.getAttribute('data-work-id')));
      const chain = (await owner.get(onBoard(projectId, '/api/items?state=ready&limit=1000'))).body.items as {
        workId: string;
        priority: number;
        rank: number | null;
      }[];
      const order = [...chain].sort(
        (a, b) =>
          (a.rank ?? Infinity) - (b.rank ?? Infinity) ||
          a.priority - b.priority ||
          Number(a.workId.slice(2)) - Number(b.workId.slice(2)),
      );
      expect(shown).toEqual(order.slice(0, PAGE * 3).map((i) => i.workId));
      await screenshot(page, 'board-10000-scrolled');
      expect(problems).toEqual([]);
    },
  );

  it('shows shouts newest first and reads older ones as the feed scrolls', async () => {
    const board = await newBoard(harness.server.url);
    const agent = await board.agent('talker');
    for (let i = 1; i <= 120; i++) expect((await agent.post('/api/shouts', { text: `shout ${i}` })).status).toBe(201);
    const { page, context, problems } = await harness.tab();
    await context.addCookies(
      [...board.owner.cookies].map(([name, value]) => ({ name, value, url: harness.server.url })),
    );
    const reads: string[] = [];
    page.on('request', (r) => new URL(r.url()).pathname === '/api/shouts' && reads.push(new URL(r.url()).search));
    await page.goto(`/boards/${board.projectId}`);
    const shouts = page.locator('section[aria-label="Shouts"] li[data-shout-id]');
    await expect.poll(() => shouts.count()).toBe(50);
    expect(await shouts.first().innerText()).toContain('shout 120');
    expect(reads).toEqual([]); // the newest came with the board, over the socket
    for (const want of [100, 120]) {
      await page.locator('section[aria-label="Shouts"] ul.feed').evaluate((el) => el.scrollTo(0, el.scrollHeight));
      await expect.poll(() => shouts.count()).toBe(want);
    }
    expect(await shouts.last().innerText()).toContain('shout 1\n');
    expect(reads).toHaveLength(2);
    expect(await page.locator('[data-more-shouts]').count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
