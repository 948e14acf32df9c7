// The console's Overview as charts, in Chromium: after a node has served an agent for a few samples,
// an operator sees its last minutes drawn (each chart's line in its own colour on the canvas), and
// each chart agrees with the API: the value under the cursor is in the chart's table, and the
// table holds what GET /api/admin/utilization/history and /api/admin/metrics answer.
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { screenshot, signerIn, useBrowserTabs } from '../support/browser.js';
import { confirmingSignIn, operatorEmail } from '../support/operators.js';
import { Client, signedUp } from '../support/server.js';
import { pace, until } from '../support/until.js';

const chromium = inject('chromium');
const OPERATOR = operatorEmail();

interface Samples {
  from: number[];
  at: number[];
  requests: number[];
  commits: number[];
  latencyP99Ms: number[];
  loopP99Ms: number[];
  loopMaxMs: number[];
  rssMiB: number[];
  heapMiB: number[];
}
type Column = keyof typeof EXPECTED;

const round2 = (n: number) => Math.round(n * 100) / 100;
const rate = (s: Samples, k: 'requests' | 'commits', i: number) =>
  round2(s[k][i]! / Math.max(1, (s.at[i]! - s.from[i]!) / 1000));
/** What each table column holds, from the API's columns (the page's own rule, restated). */
const EXPECTED = {
  requestsPerSecond: (s: Samples, i: number) => rate(s, 'requests', i),
  commitsPerSecond: (s: Samples, i: number) => rate(s, 'commits', i),
  latencyP99Ms: (s: Samples, i: number) => s.latencyP99Ms[i]!,
  loopP99Ms: (s: Samples, i: number) => s.loopP99Ms[i]!,
  loopMaxMs: (s: Samples, i: number) => s.loopMaxMs[i]!,
  rssMiB: (s: Samples, i: number) => s.rssMiB[i]!,
  heapMiB: (s: Samples, i: number) => s.heapMiB[i]!,
};
/** Each node chart, its first series' table column and colour. */
const NODE_CHARTS: [string, Column, string][] = [
  ['Requests per second', 'requestsPerSecond', '--series-requests'],
  ['Commits per second', 'commitsPerSecond', '--series-commits'],
  ['Request latency, p99', 'latencyP99Ms', '--series-latency'],
  ['Event-loop delay', 'loopP99Ms', '--series-loop'],
  ['Memory', 'rssMiB', '--series-rss'],
];
const DAY_CHARTS: [string, string][] = [
  ['Requests', 'requests'],
  ['Refused (401, 403, 429)', 'refusals'],
  ['Commits', 'commits'],
  ['Active boards', 'activeBoards'],
  ['Active agents', 'activeAgents'],
  ['Sign-ups', 'signups'],
];

const num = (text: string) => Number(text.replace(/,/g, ''));

/** Pixels of the canvas within a small distance of the CSS colour `--name`: the series drawn. */
function pixelsOf(page: Page, figure: string, color: string): Promise<number> {
  return page.evaluate(
    `(() => {
      const hex = getComputedStyle(document.documentElement).getPropertyValue(${JSON.stringify(color)}).trim();
      const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
      const canvas = document.querySelector(${JSON.stringify(figure)} + ' canvas');
      const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4)
        if (d[i + 3] > 200 && Math.abs(d[i] - r) + Math.abs(d[i + 1] - g) + Math.abs(d[i + 2] - b) < 40) n++;
      return n;
    })()`,
  );
}

/** Hovers the chart's right edge and reads its legend: the x label and the first series' value. */
async function underCursor(page: Page, figure: string): Promise<{ x: string; value: string }> {
  const over = page.locator(`${figure} .u-over`);
  const box = (await over.boundingBox())!;
  await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
  const values = page.locator(`${figure} .u-legend .u-value`);
  await until(async () => (await values.first().innerText()) !== '—');
  return { x: await values.nth(0).innerText(), value: await values.nth(1).innerText() };
}

describe.skipIf(!chromium)('the console’s Overview as charts (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'admin-overview', {
    OPERATOR_EMAILS: OPERATOR,
    BOARD_RATE_SCALE: '20', // the agent writes a few a second for a while: beyond a free board's 120 a minute
  });
  const asOperator = confirmingSignIn(() => tabs.server, OPERATOR, signerIn(OPERATOR));

  it('draws the node’s last minutes and the 14 days, each chart agreeing with the API', async () => {
    const person = await signedUp(tabs.server.url);
    const projectId = (await person.client.get('/api/projects')).body.projects[0].projectId as string;
    const token = await person.client.post('/api/accounts/tokens', {
      ...{ name: 'builder', scope: 'workspace', projectId, role: 'member' },
    });
    expect(token.status, token.text).toBe(201);
    const agent = new Client(tabs.server.url, { authorization: `Bearer ${token.body.secret}` });
    const { page, problems } = await tabs.tab();
    await asOperator(page);
    const api = async <T>(path: string): Promise<T> => {
      const res = await page.request.get(path);
      expect(res.status(), path).toBe(200);
      return (await res.json()) as T;
    };
    type History = { everyMs: number; nodes: { nodeId: string; self: boolean; samples: Samples }[] };
    const own = async () => (await api<History>('/api/admin/utilization/history')).nodes[0]!;

    // The agent works until three samples have seen its requests and commits (the operator looks once a
    // second), about ten writes a second: as fast as the node answers, a fast machine spent the
    // board's 2,400 writes a minute (BOARD_RATE_SCALE 20) within the test.
    let n = 0;
    await until(
      async () => {
        for (const end = Date.now() + 1000; Date.now() < end; n++) {
          expect((await agent.post('/api/items', { title: `Task ${n}` })).status).toBe(201);
          expect((await agent.get('/api/items')).status).toBe(200);
          await pace(100);
        }
        const s = (await own()).samples;
        return s.at.filter((_, i) => s.requests[i]! > 0 && s.commits[i]! > 0).length >= 3;
      },
      { timeout: 40_000, what: 'three samples with requests and commits' },
    );
    type Days = { days: Record<string, number | string>[] };
    const daysBefore = await api<Days>('/api/admin/metrics?days=14');

    await page.goto('/admin/overview');
    const self = '.node[data-self]';
    for (const [title, , color] of NODE_CHARTS) {
      const figure = `${self} figure[aria-label="${title}"]`;
      await page.locator(`${figure} canvas`).waitFor();
      await until(async () => (await pixelsOf(page, figure, color)) > 30, { what: `${title}: its line drawn` });
    }
    for (const [title] of DAY_CHARTS) await page.locator(`figure[aria-label="${title}"] canvas`).waitFor();
    await screenshot(page, 'admin-overview-charts');

    // The tables, one click away, hold the API's numbers.
    await page.locator(self).getByText('Samples as a table').click();
    const rows = page.locator(`${self} table.series-table tbody tr`);
    await rows.nth(2).waitFor();
    /** The table as shown now, by sample time (it is read again with the charts every 5 s). */
    const readTable = async () => {
      const table = new Map<number, Record<string, string>>();
      for (const tr of await rows.all()) {
        const cells = await tr.locator('td').allInnerTexts();
        const columns = await tr
          .locator('td[data-column]')
          .evaluateAll((tds) => tds.map((td) => td.getAttribute('data-column')!));
        table.set(Number(await tr.getAttribute('data-at')), {
          time: cells[0]!,
          ...Object.fromEntries(columns.map((c, i) => [c, cells[i + 1]!])),
        });
      }
      return table;
    };
    const table = await readTable();
    const s = (await own()).samples;
    const common = s.at.map((at, i) => [at, i] as const).filter(([at]) => table.has(at));
    expect(common.length).toBeGreaterThanOrEqual(3);
    for (const [at, i] of common)
      for (const [column, of] of Object.entries(EXPECTED))
        expect(num(table.get(at)![column]!), `${column} at ${at}`).toBe(of(s, i));

    // Each chart, under the cursor: a time and value its table holds.
    for (const [title, column] of NODE_CHARTS) {
      const { x, value } = await underCursor(page, `${self} figure[aria-label="${title}"]`);
      const inThatMinute = [...(await readTable()).values()]
        .filter((r) => r.time!.startsWith(x))
        .map((r) => num(r[column]!));
      expect(inThatMinute, `${title} at ${x}`).toContain(num(value));
    }

    // The 14 days: bars for today read as the API answered, before and after the page read them.
    await page.getByText('Days as a table').click();
    const days = 'section[aria-label="Last 14 days"] details table.list';
    // The table is drawn once the details open (a render after the toggle): read it after that.
    await page.locator(`${days} tbody tr`).first().waitFor();
    const daysAfter = await api<Days>('/api/admin/metrics?days=14');
    const header = await page.locator(`${days} thead th`).allTextContents();
    const today = await page.locator(`${days} tbody tr`).first().locator('td').allTextContents();
    expect(today[header.indexOf('day')]).toBe(daysAfter.days[0]!.day);
    for (const [title, key] of DAY_CHARTS) {
      const shown = num(today[header.indexOf(key.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase())]!);
      expect(shown, key).toBeGreaterThanOrEqual(daysBefore.days[0]![key] as number);
      expect(shown, key).toBeLessThanOrEqual(daysAfter.days[0]![key] as number);
      const bar = await underCursor(page, `figure[aria-label="${title}"]`);
      expect(num(bar.value), `${title} bar`).toBe(shown);
    }
    expect(num(today[header.indexOf('commits')]!)).toBeGreaterThanOrEqual(n);
    await page.mouse.move(0, 0);
    await screenshot(page, 'admin-overview-tables');
    expect(problems).toEqual([]);
  }, 90_000);
});
