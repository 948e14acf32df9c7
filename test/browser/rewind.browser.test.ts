// The account's Rewind section in Chromium against a real server: a Pro board's restore points,
// a preview (what would come back, disappear and change), the apply behind the typed
// confirmation (refused once because the board moved, then applied), the open board dropping the
// removed items live with a notice, and the undo bringing them back. A Free board gets the Pro note.
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { type BrowserPage, landOn, screenshot, signUpInPage, useBrowserTabs } from '../support/browser.js';
import { Client } from '../support/server.js';
import { makePro, webhookOnlyBilling } from '../support/billing.js';
import { unique } from '../support/temp.js';

const chromium = inject('chromium');
const SECRET = 'whsec_browser_rewind';
const PASSWORD = 'correct horse battery staple';

describe.skipIf(!chromium)('the Rewind section and the live board (Chromium)', () => {
  const suite = useBrowserTabs(chromium!, 'rewind', webhookOnlyBilling(SECRET));
  const { tab } = suite;

  /** Signs up in a tab, and logs the same account in from Node for the HTTP side. */
  async function ownerTab(): Promise<{ tab: BrowserPage; owner: Client; projectId: string }> {
    const t = await tab();
    const email = `${unique('rewind')}@example.com`;
    await signUpInPage(t.page, email, PASSWORD);
    const owner = new Client(suite.server.url);
    expect((await owner.post('/api/auth/login', { email, password: PASSWORD })).status).toBe(200);
    const projectId = (await owner.get('/api/projects')).body.projects[0].projectId as string;
    return { tab: t, owner, projectId };
  }

  const card = (page: Page, workId: string) => page.locator(`a.card[data-work-id="${workId}"]`);
  const cardIn = (page: Page, state: string, workId: string) =>
    page.locator(`section.column[data-state="${state}"] a.card[data-work-id="${workId}"]`).waitFor();
  /** The work ids a preview lists under `name` (Added, Removed, Changed). */
  const listed = (section: ReturnType<Page['locator']>, name: string) =>
    section
      .getByRole('region', { name })
      .locator('li[data-work-id]')
      .evaluateAll((lis) => lis.map((li) => li.getAttribute('data-work-id')));

  it('previews a point, applies it behind the typed confirmation while the board drops the removed items live, then undoes it', async () => {
    const { tab: boardTab, owner, projectId } = await ownerTab();
    await makePro(suite.server.url, suite.server.store, { owner, projectId }, SECRET);
    const issued = await owner.post('/api/accounts/tokens', {
      name: 'builder',
      scope: 'workspace',
      projectId,
      role: 'member',
    });
    expect(issued.status, issued.text).toBe(201);
    const agent = new Client(suite.server.url, { authorization: `Bearer ${issued.body.secret}` });

    // Two batches (a point is kept before each), then an operator's block (a point before it) and a claim.
    expect(
      (
        await agent.post('/api/items/batch', {
          items: [{ title: 'Design the schema' }, { title: 'Write the migration' }],
        })
      ).status,
    ).toBe(201);
    expect(
      (await agent.post('/api/items/batch', { items: [{ title: 'Write the docs' }, { title: 'Ship it' }] })).status,
    ).toBe(201);
    expect(
      (
        await owner.post(`/api/items/W-2/state?projectId=${projectId}`, {
          action: 'block',
          reason: 'waiting on review',
        })
      ).status,
    ).toBe(200);
    expect((await agent.post('/api/claim', { workId: 'W-1' })).status).toBe(200);
    const points = (await owner.get(`/api/account/rewind?projectId=${projectId}`)).body.points as {
      restorePointId: string;
      reason: string;
      itemCount: number;
    }[];
    const beforeSecond = points.find((p) => p.reason === 'batch' && p.itemCount === 2)!.restorePointId;

    // The board, open in its own page; a marker on its window proves nothing reloads it.
    const { page: board } = boardTab;
    await board.goto(`/boards/${projectId}`);
    await board.locator('.conn[data-state="live"]').waitFor();
    await cardIn(board, 'ready', 'W-3');
    await cardIn(board, 'blocked', 'W-2');
    await cardIn(board, 'claimed', 'W-1');
    await board.evaluate('window.__marker = "still here"');

    // The Rewind section in another page of the same session.
    const accountTab = await tab();
    await accountTab.context.addCookies(await boardTab.context.cookies());
    const { page } = accountTab;
    await page.goto('/account/rewind');
    const section = page.locator('section[aria-labelledby="rewind"]');
    await section.getByRole('table', { name: 'Restore points' }).waitFor();
    expect(await section.locator('tbody tr').count()).toBe(3);
    await section.locator('tr', { hasText: 'Before an operator’s state move' }).waitFor();
    await expect
      .poll(() => section.locator('code[data-fingerprint]').getAttribute('title'))
      .toMatch(/^sha256:[a-f0-9]{64}$/);

    // Preview the point before the second batch: W-3 and W-4 would disappear, W-2 would change.
    await section
      .locator(`tr[data-point-id="${beforeSecond}"]`)
      .getByRole('button', { name: /^Preview/ })
      .click();
    const preview = section.locator('section[aria-labelledby="rewind-preview"]');
    await preview.getByRole('region', { name: 'Removed' }).locator('li').first().waitFor();
    expect(await listed(preview, 'Removed')).toEqual(['W-3', 'W-4']);
    expect(await listed(preview, 'Added')).toEqual([]);
    expect(await listed(preview, 'Changed')).toEqual(['W-2']);
    // Items on the board now are named by their titles too, with the fields that would change.
    await preview.getByRole('region', { name: 'Removed' }).getByText('Write the docs').waitFor();
    expect(await preview.getByRole('region', { name: 'Changed' }).innerText()).toMatch(
      /W-2 Write the migration\s+blockedReason, state/,
    );
    // Every lease on the board ends with a whole-board rewind: the page says whose.
    await preview.getByText('These leases end at once: W-1 (builder, work).').waitFor();

    // Apply stays disabled until the confirmation is typed exactly.
    const rewindButton = preview.getByRole('button', { name: 'Rewind the board' });
    const confirm = preview.locator('input[name="confirm"]');
    expect(await rewindButton.isDisabled()).toBe(true);
    await confirm.fill('REWIND_SERVICE');
    expect(await rewindButton.isDisabled()).toBe(true);
    await confirm.fill('REWIND_SERVICE_BOARD');
    expect(await rewindButton.isEnabled()).toBe(true);
    await screenshot(page, 'account-rewind');

    // The board moves after the preview: the apply is refused, and the preview is read again.
    expect((await agent.post('/api/items', { title: 'Late arrival' })).status).toBe(201);
    await cardIn(board, 'ready', 'W-5');
    await rewindButton.click();
    await preview.getByRole('alert').getByText('The board changed since').waitFor();
    await expect.poll(() => listed(preview, 'Removed')).toEqual(['W-3', 'W-4', 'W-5']);
    await screenshot(page, 'account-rewind-mismatch');
    // A stale yes is not kept: the confirmation is typed again for the new preview.
    expect(await confirm.inputValue()).toBe('');
    expect(await rewindButton.isDisabled()).toBe(true);
    await confirm.fill('REWIND_SERVICE_BOARD');
    await rewindButton.click();
    const done = section.getByRole('status').filter({ hasText: 'Rewound to point' });
    await done.waitFor();
    const undoPointId = (await done.locator('code[data-undo-point]').innerText()).trim();
    expect(undoPointId).toMatch(new RegExp(`^rp_${projectId}_\\d+$`));
    await done.getByText('Leases ended: W-1 (builder, work).').waitFor();

    // The open board: the removed cards go, W-2 is ready again, W-1's lease ended; no navigation.
    for (const id of ['W-3', 'W-4', 'W-5']) await expect.poll(() => card(board, id).count()).toBe(0);
    await cardIn(board, 'ready', 'W-2');
    await cardIn(board, 'ready', 'W-1');
    const notice = board.locator('.notice[data-rewound]');
    await notice.getByText(`Board rewound to restore point #${beforeSecond.split('_').at(-1)} by you`).waitFor();
    expect(await notice.innerText()).toMatch(/3 removed, 1 changed, 1 lease ended/);
    expect(await board.evaluate('window.__marker')).toBe('still here');
    await screenshot(board, 'board-rewound');

    // Undo: the undo point previewed against the new fingerprint, applied the same way.
    await done.getByRole('button', { name: 'Undo this rewind' }).click();
    await expect.poll(() => listed(preview, 'Added')).toEqual(['W-3', 'W-4', 'W-5']);
    await preview.getByRole('heading', { name: `Preview: point #${undoPointId.split('_').at(-1)}` }).waitFor();
    await expect.poll(() => section.locator('tr', { hasText: 'Before a rewind (its undo point)' }).count()).toBe(1);
    await confirm.fill('REWIND_SERVICE_BOARD');
    await screenshot(page, 'account-rewind-undo');
    await rewindButton.click();
    await section
      .getByRole('status')
      .filter({ hasText: `Rewound to point #${undoPointId.split('_').at(-1)}` })
      .waitFor();
    for (const id of ['W-3', 'W-4', 'W-5']) await cardIn(board, 'ready', id);
    await cardIn(board, 'blocked', 'W-2');
    await notice.getByText(`Board rewound to restore point #${undoPointId.split('_').at(-1)} by you`).waitFor();
    expect(await board.evaluate('window.__marker')).toBe('still here');
    // The notice leads its owner to this board's restore points.
    expect(await notice.getByRole('link', { name: 'Restore points' }).getAttribute('href')).toBe(
      `/account/rewind?projectId=${projectId}`,
    );

    expect(boardTab.problems).toEqual([]);
    expect(accountTab.problems).toEqual([]);
  });

  it('a Free board gets the note that rewind is Pro, with the way to Billing', async () => {
    const { tab: t } = await ownerTab();
    const { page } = t;
    await page.goto('/account/rewind');
    const section = page.locator('section[aria-labelledby="rewind"]');
    await section.getByText('Rewind is a Pro feature.').waitFor();
    expect(await section.getByRole('table').count()).toBe(0);
    await screenshot(page, 'account-rewind-free');
    await section.getByRole('link', { name: 'Billing' }).click();
    await landOn(page, '/account/billing');
    await page.locator('section[aria-labelledby="billing"]').getByText('Free', { exact: true }).waitFor();
    expect(t.problems).toEqual([]);
  });
});
