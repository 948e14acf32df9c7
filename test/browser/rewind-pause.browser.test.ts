// The Rewind section's guided flow in Chromium against a real server while agents work the board:
// pause, preview, apply, resume, each step marked as it is done; the agents meet BOARD_PAUSED while
// paused and finish the board after the resume. A Free board is shown the points it keeps and what
// Pro would restore.
import { describe, expect, inject, it } from 'vitest';
import type { Locator } from 'playwright-core';
import { screenshot, signUpInPage, useBrowserTabs } from '../support/browser.js';
import { head } from '../support/board.js';
import { Client } from '../support/server.js';
import { makePro, webhookOnlyBilling } from '../support/billing.js';
import { unique } from '../support/temp.js';
import { pace, until } from '../support/until.js';
import { FREE_POINTS } from '../../src/plans.js';

const chromium = inject('chromium');
const SECRET = 'whsec_browser_rewind_pause';
const PASSWORD = 'correct horse battery staple';
const ITEMS = 30;

describe.skipIf(!chromium)('the guided rewind: pause, preview, apply, resume (Chromium)', () => {
  const suite = useBrowserTabs(chromium!, 'rewind-pause', webhookOnlyBilling(SECRET));
  const { tab } = suite;

  async function ownerTab() {
    const t = await tab();
    const email = `${unique('pause')}@example.com`;
    await signUpInPage(t.page, email, PASSWORD);
    const owner = new Client(suite.server.url);
    expect((await owner.post('/api/auth/login', { email, password: PASSWORD })).status).toBe(200);
    const projectId = (await owner.get('/api/projects')).body.projects[0].projectId as string;
    const agent = async (name: string) => {
      const issued = await owner.post('/api/accounts/tokens', { name, scope: 'workspace', projectId, role: 'member' });
      expect(issued.status, issued.text).toBe(201);
      return new Client(suite.server.url, { authorization: `Bearer ${issued.body.secret}` });
    };
    return { t, owner, projectId, agent };
  }

  const step = (section: Locator, key: string) => section.locator(`li[data-step="${key}"]`);

  it(
    'takes the owner through the four steps while six agents work, and the agents finish the board after the resume',
    { timeout: 120_000 },
    async () => {
      const { t, owner, projectId, agent } = await ownerTab();
      await makePro(suite.server.url, suite.server.store, { owner, projectId }, SECRET);
      const feeder = await agent('feeder');
      expect(
        (
          await feeder.post('/api/items/batch', {
            items: Array.from({ length: ITEMS }, (_, i) => ({ title: `Task ${i + 1}` })),
          })
        ).status,
      ).toBe(201);
      const status = async () =>
        (await owner.get(`/api/status?projectId=${projectId}`)).body as {
          paused: boolean;
          counts: Record<string, number>;
        };

      // Six agents: claim, a little work, submit; while paused they keep their lease renewed. Their
      // progress follows the owner's steps, not the clock: past 4 items done they hold their leases
      // until the block is made, and past 8 until the board is paused. So however fast or slow the
      // agents and the page are, the block comes with work left, and the pause finds every agent
      // mid-work (each meets BOARD_PAUSED and renews, and the rewind ends its lease).
      const agents = await Promise.all(Array.from({ length: 6 }, (_, i) => agent(`worker-${i}`)));
      let stop = false;
      let finished = 0; // items the agents submitted
      const gate = () => {
        let open!: () => void;
        return { opened: new Promise<void>((resolve) => (open = resolve)), open: () => open() };
      };
      const [blocked, paused] = [gate(), gate()];
      const refused = new Map<string, number>();
      const note = (code: string) => refused.set(code, (refused.get(code) ?? 0) + 1);
      const work = async (a: Client, n: number) => {
        for (let round = 0; !stop; round++) {
          const grant = await a.post('/api/claim', {});
          if (grant.status !== 200) {
            note(grant.body.error.code);
            await pace(100);
            continue;
          }
          await pace(150);
          if (finished >= 4) await blocked.opened;
          if (finished >= 8) await paused.opened;
          for (;;) {
            const submitted = await a.post('/api/submit', {
              leaseId: grant.body.leaseId,
              head: head(n * 1000 + round),
            });
            if (submitted.status === 200) finished++;
            if (submitted.status === 200 || submitted.body.error.code !== 'BOARD_PAUSED') break;
            note('BOARD_PAUSED');
            await pace(200);
            const renewed = await a.post('/api/lease', { leaseId: grant.body.leaseId, action: 'renew' });
            if (renewed.status !== 200 || renewed.body.revoked) break;
          }
        }
      };
      const fleet = Promise.all(agents.map(work));
      try {
        await until(async () => (await status()).counts.done! >= 4, 30_000);
        // An operator's block of the last task keeps a point of the board just before it.
        expect(
          (
            await owner.post(`/api/items/W-${ITEMS}/state?projectId=${projectId}`, {
              action: 'block',
              reason: 'an agent went wrong',
            })
          ).status,
        ).toBe(200);
        blocked.open();
        await until(async () => (await status()).counts.done! >= 8, 30_000);

        const { page } = t;
        await page.goto(`/account/rewind?projectId=${projectId}`);
        const section = page.locator('section[aria-labelledby="rewind"]');
        const steps = section.getByRole('list', { name: 'Rewind step by step' });
        await steps.waitFor();
        expect(await step(steps, 'pause').getAttribute('aria-current')).toBe('step');
        expect(await steps.locator('li[data-done="yes"]').count()).toBe(0);

        // 1. Pause: the step says who paused it; the agents are refused from then on.
        await step(steps, 'pause').getByRole('button', { name: 'Pause the board' }).click();
        await step(steps, 'pause')
          .getByText(/^Paused by you/)
          .waitFor();
        expect(await step(steps, 'pause').getAttribute('data-done')).toBe('yes');
        expect(await step(steps, 'preview').getAttribute('aria-current')).toBe('step');
        expect((await status()).paused).toBe(true);
        paused.open();
        await until(() => (refused.get('BOARD_PAUSED') ?? 0) >= 6, 20_000);

        // 2. Preview the point kept before the block: the blocked task would be ready again.
        await section
          .locator('tr', { hasText: 'Before an operator’s state move' })
          .getByRole('button', { name: /^Preview/ })
          .click();
        const preview = section.locator('section[aria-labelledby="rewind-preview"]');
        await preview.getByRole('region', { name: 'Changed' }).locator(`li[data-work-id="W-${ITEMS}"]`).waitFor();
        expect(await step(steps, 'apply').getAttribute('aria-current')).toBe('step');
        await preview.locator('input[name="confirm"]').fill('REWIND_SERVICE_BOARD');
        await screenshot(page, 'rewind-paused-preview');

        // 3. Apply: it lands on the paused board at the first try.
        await preview.getByRole('button', { name: 'Rewind the board' }).click();
        const done = section.getByRole('status').filter({ hasText: 'Rewound to point' });
        await done.waitFor();
        expect(await section.getByRole('alert').count()).toBe(0);
        await done.getByText(/^Leases ended: W-\d+ \(worker-\d, work\)/).waitFor();
        expect(await step(steps, 'apply').getAttribute('data-done')).toBe('yes');
        expect(await step(steps, 'resume').getAttribute('aria-current')).toBe('step');
        await step(steps, 'resume').getByText('The rewind landed: let the agents carry on.').waitFor();
        await screenshot(page, 'rewind-applied-paused');

        // 4. Resume: every step is done, and the agents carry on to the end.
        await step(steps, 'resume').getByRole('button', { name: 'Resume the board' }).click();
        await step(steps, 'resume').getByText('The board is running again.').waitFor();
        await step(steps, 'pause').getByRole('button', { name: 'Pause again' }).waitFor();
        expect(await steps.locator('li[data-done="yes"]').count()).toBe(4);
        expect(await steps.locator('li[aria-current="step"]').count()).toBe(0);
        expect((await status()).paused).toBe(false);
        await until(async () => (await status()).counts.done === ITEMS, 60_000);
        await screenshot(page, 'rewind-resumed');
        expect(t.problems).toEqual([]);
      } finally {
        stop = true;
        blocked.open();
        paused.open();
        await fleet;
      }
      expect([...refused.keys()].filter((code) => code !== 'BOARD_PAUSED' && code !== 'NOTHING_READY')).toEqual([]);
    },
  );

  it('shows a Free board the restore points it keeps, as what Pro would restore', async () => {
    const { t, agent } = await ownerTab();
    const builder = await agent('builder');
    for (let n = 1; n <= 3; n++) {
      expect((await builder.post('/api/items/batch', { items: [{ title: `Batch ${n}` }] })).status).toBe(201);
      suite.server.advance(FREE_POINTS.everyMs); // a Free board keeps at most one point a minute before its moves
    }
    const { page } = t;
    await page.goto('/account/rewind');
    const section = page.locator('section[aria-labelledby="rewind"]');
    await section.getByText('Rewind is a Pro feature.').waitFor();
    await section.getByText('It keeps its newest 20 restore points of the last 24 hours').waitFor();
    const kept = section.locator('section[aria-labelledby="rewind-free-points"]');
    await kept.getByRole('heading', { name: 'What Pro would restore' }).waitFor();
    const rows = kept.getByRole('table', { name: 'Restore points' }).locator('tbody tr');
    expect(await rows.count()).toBe(3);
    expect(await rows.locator('td:nth-child(4)').allInnerTexts()).toEqual(['2', '1', '0']);
    expect(await kept.getByRole('button').count()).toBe(0);
    await screenshot(page, 'account-rewind-free-points');
    expect(t.problems).toEqual([]);
  });

  it('shows a paused board as paused on its page, live, and lets its owner resume it there', async () => {
    const { t, owner, projectId, agent } = await ownerTab();
    const worker = await agent('worker');
    expect((await worker.post('/api/items', { title: 'waits while paused' })).status).toBe(201);
    const pause = (paused: boolean) => owner.request('PATCH', `/api/projects/${projectId}`, { json: { paused } });
    expect((await pause(true)).status).toBe(200);
    await t.page.goto(`/boards/${projectId}`);
    const banner = t.page.locator('[data-paused]');
    await banner.getByText(/claims and changes to items wait/).waitFor();
    await screenshot(t.page, 'board-paused');
    // Resumed from the page: the banner goes, and the agent's claim goes through.
    await banner.getByRole('button', { name: 'Resume' }).click();
    await banner.waitFor({ state: 'detached' });
    expect((await owner.get(`/api/status?projectId=${projectId}`)).body.paused).toBe(false);
    expect((await worker.post('/api/claim', {})).status).toBe(200);
    // Paused elsewhere: the page hears it without a reload.
    expect((await pause(true)).status).toBe(200);
    await banner.waitFor();
    expect(t.problems).toEqual([]);
  });
});
