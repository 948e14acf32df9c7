// Every time in the operators' console is UTC and says so, whatever the operator's own zone: the
// Live feed's time column, the Overview's charts and samples table, the Audit rows.
import { describe, expect, inject, it } from 'vitest';
import { screenshot, signerIn, useBrowserTabs } from '../support/browser.js';
import { confirmingSignIn, operatorEmail } from '../support/operators.js';
import { newBoard } from '../support/board.js';
import { unique } from '../support/temp.js';

const chromium = inject('chromium');
const OPERATOR = operatorEmail();
const REASON = 'Reason (kept in the audit log)';

describe.skipIf(!chromium)('the console in UTC (Chromium, an operator in Kathmandu)', () => {
  const tabs = useBrowserTabs(chromium!, 'admin-utc', { OPERATOR_EMAILS: OPERATOR });
  const asOperator = confirmingSignIn(() => tabs.server, OPERATOR, signerIn(OPERATOR));

  it('labels Live, Overview and Audit times UTC and shows them in UTC', { timeout: 60_000 }, async () => {
    const t = await tabs.tab();
    const { page } = t;
    // UTC+05:45: a time shown in the browser's zone differs from UTC in its hours and minutes.
    const cdp = await t.context.newCDPSession(page);
    await cdp.send('Emulation.setTimezoneOverride', { timezoneId: 'Asia/Kathmandu' });
    await asOperator(page);
    const utc = (t: number | string) => new Date(t).toISOString().slice(0, 19).replace('T', ' ');

    // Live: an item made on someone's board, its row's time in UTC under "time (UTC)".
    await page.goto('/admin/live');
    await page.getByText('Waiting for events…').waitFor();
    const { owner, projectId } = await newBoard(tabs.server.url);
    expect((await owner.post(`/api/items?projectId=${projectId}`, { title: 'One' })).status).toBe(201);
    const events = (await owner.get(`/api/activity?projectId=${projectId}`)).body.events as {
      seq: number;
      type: string;
      at: string;
    }[];
    const created = events.find((e) => e.type === 'item.created')!;
    const firehose = page.getByRole('log', { name: 'Firehose' });
    const liveRow = firehose.locator(`tbody tr[data-board="${projectId}"][data-seq="${created.seq}"]`);
    await liveRow.waitFor();
    expect(await firehose.locator('thead th').first().innerText()).toMatch(/^time \(UTC\)$/i);
    expect(await liveRow.locator('td').first().innerText()).toBe(new Date(created.at).toISOString().slice(11, 23));

    // Overview: the samples table and the charts' time axis.
    await page.goto('/admin/overview');
    const self = page.locator('.node[data-self]');
    await self.locator('figure canvas').first().waitFor({ timeout: 20_000 });
    expect(await self.locator('figure .u-legend').first().innerText()).toContain('time (UTC)');
    await self.getByText('Samples as a table').click();
    const row = self.locator('table.series-table tbody tr').first();
    await row.waitFor();
    expect(await self.locator('table.series-table th').first().innerText()).toBe('time (UTC)');
    const at = Number(await row.getAttribute('data-at'));
    expect(await row.locator('td').first().innerText()).toBe(utc(at).slice(11));
    await screenshot(page, 'admin-utc-overview');

    // Audit: an allowlist entry's row, its time in UTC under "At (UTC)".
    await page.goto('/admin/abuse');
    const domain = `${unique('utc')
      .replace(/[^a-z0-9]/gi, '')
      .toLowerCase()}.example.com`;
    await page.getByLabel('Address, CIDR range or email domain').fill(domain);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const step = page.getByRole('group', { name: 'Add' });
    await step.getByLabel(REASON).fill('time zone check');
    await step.getByRole('button', { name: 'Yes, add' }).click();
    await step.waitFor({ state: 'detached' });
    const audit = await page.request.get(`/api/admin/audit?target=${encodeURIComponent(`allowlist:${domain}`)}`);
    const [row0] = (await audit.json()).rows as { at: string | number }[];
    await page.goto('/admin/audit');
    const header = page.locator('table.list thead th').first();
    await header.waitFor();
    expect(await header.innerText()).toMatch(/^at \(UTC\)$/i);
    const first = page
      .locator('table.list tbody tr', { hasText: `allowlist:${domain}` })
      .locator('td')
      .first();
    expect(await first.innerText()).toBe(utc(row0!.at));
    await screenshot(page, 'admin-utc-audit');
    expect(t.problems).toEqual([]);
  });
});
