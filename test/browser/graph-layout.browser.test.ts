// The Dependencies view lays the graph out again only when items or their links change: a live
// update that moves an item recolours its node in place. The drawing sits at its natural size in
// a pane of bounded height that scrolls.
import { describe, expect, inject, it } from 'vitest';
import { screenshot, useBrowserTabs } from '../support/browser.js';
import { head, newBoard } from '../support/board.js';

const chromium = inject('chromium');

describe.skipIf(!chromium)('the dependency graph under live updates (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'graph-layout');

  it('recolours on a state change and lays out again only for a new item or link', async () => {
    const board = await newBoard(tabs.server.url);
    const { owner, projectId } = board;
    const agent = await board.agent('worker');
    const items = Array.from({ length: 40 }, (_, i) => ({
      ref: `r${i}`,
      title: `Step ${i + 1}`,
      ...(i % 4 ? { dependsOn: [`r${i - 1}`] } : {}),
    }));
    expect((await owner.post(`/api/items/batch?projectId=${projectId}`, { items })).status).toBe(201);

    const t = await tabs.tab();
    const { page } = t;
    await t.context.addCookies([...owner.cookies].map(([name, value]) => ({ name, value, url: tabs.server.url })));
    await page.goto(`/boards/${projectId}#graph`);
    const graph = page.locator('.graph');
    const node = (workId: string) => graph.locator(`a[href$="/items/${workId}"] rect`);
    await node('W-1').waitFor();
    const layouts = async () => Number(await graph.getAttribute('data-layouts'));
    const before = await layouts();
    expect(before).toBeGreaterThanOrEqual(1);

    // A claim and a submit: W-1's node changes colour, the layout stays.
    const fill = () => node('W-1').getAttribute('fill');
    const ready = await fill();
    const grant = await agent.post('/api/claim', { workId: 'W-1' });
    expect(grant.status, grant.text).toBe(200);
    await expect.poll(fill).not.toBe(ready);
    expect((await agent.post('/api/submit', { leaseId: grant.body.leaseId, head: head(1) })).status).toBe(200);
    await expect.poll(() => graph.locator('a[href$="/items/W-1"] text').first().textContent()).toContain('done');
    expect(await layouts()).toBe(before);

    // A new item linked to one drawn: laid out again, and drawn.
    const added = await owner.post(`/api/items?projectId=${projectId}`, { title: 'Release', dependsOn: ['W-40'] });
    expect(added.status, added.text).toBe(201);
    await node(added.body.workId).waitFor();
    expect(await layouts()).toBe(before + 1);

    // The pane is bounded and scrolls; the drawing is not scaled past its natural size.
    const pane = (await page.evaluate(`(() => {
      const p = document.querySelector('.graph-pane');
      const svg = p.querySelector('svg');
      return { pane: p.clientHeight, inner: svg.getBoundingClientRect().height, natural: Number(svg.getAttribute('height')), view: innerHeight };
    })()`)) as { pane: number; inner: number; natural: number; view: number };
    expect(pane.inner).toBe(pane.natural);
    expect(pane.pane).toBeLessThanOrEqual(Math.ceil(pane.view * 0.7));
    await screenshot(page, 'graph-layout');
    expect(t.problems).toEqual([]);
  });
});
