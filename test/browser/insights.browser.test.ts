// A board's Insights in Debian's Chromium, as a viewer sees them: empty at first (and saying so),
// filling in live as items arrive and a paced fleet works the board for twenty seconds; then a second
// page opened afterwards. Each page's tables hold what GET /api/metrics answers the same session,
// each chart's canvas is drawn in its series' colours, and one more claim, expiry and submit move
// today's numbers with no reload and no REST read; today's times come with "Read again". Then a
// month of days (answered by the test: a board made now has one) drawn as a long-lived board's.
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { landOn, screenshot, useBrowserTabs, type BrowserPage } from '../support/browser.js';
import { head, newBoard } from '../support/board.js';
import { signedUp, type Client } from '../support/server.js';
import { pace, until } from '../support/until.js';
import { runPacedFleet } from './paced-fleet.js';
import type { SeriesDay } from '../../machines/board-stats.js';

const chromium = inject('chromium');

const STATES = ['pending', 'ready', 'claimed', 'awaiting_verify', 'verifying', 'done', 'blocked', 'cancelled'];
const AGENTS = 8;
const ITEMS = 500;
/** Cycles a second over the whole fleet, for about twenty seconds. */
const PACE = 5;
const FLEET_MS = 20_000;
/** Leases a dropper takes and lets run out during the fleet’s run, this short (s). */
const SHORT_TTL = 2;

/** One UTC day of GET /api/metrics's `days`. */
type Day = SeriesDay;

const int = (n: number) => n.toLocaleString('en-US');
const percent = (r: number | null) => (r === null ? '—' : `${(r * 100).toFixed(1)}%`);
const oneDecimal = (v: number | null) => (v === null ? '—' : String(Math.round(v * 10) / 10));
const UNITS: Record<string, number> = { seconds: 1, minutes: 60, hours: 3600 };

/** The tables' columns for one day, as the page should show them (agents and times only where asked). */
function expected(d: Day, per: number | null, agents: boolean): Record<string, string> {
  return {
    ...Object.fromEntries(STATES.map((st) => [`flow.${st}`, d.counts ? int(d.counts[st] ?? 0) : '—'])),
    'throughput.done': int(d.done),
    'rates.verdicts': int(d.verdicts),
    'rates.passes': int(d.passes),
    'rates.pass-rate': percent(d.verifyPassRate),
    'rates.grants': int(d.grants),
    'rates.expiries': int(d.expiries),
    'rates.expiry-rate': percent(d.leaseExpiryRate),
    ...(agents && { 'agents.agents': int(d.agentsActive) }),
    ...(per !== null && {
      'ready-to-done.median': oneDecimal(
        d.readyToDoneSeconds.median === null ? null : d.readyToDoneSeconds.median / per,
      ),
      'ready-to-done.p90': oneDecimal(d.readyToDoneSeconds.p90 === null ? null : d.readyToDoneSeconds.p90 / per),
    }),
  };
}

/** What the page's tables hold for `day`, in the same keys (textContent: a closed table counts too). */
async function shown(page: Page, day: string, keys: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const key of keys) {
    const [chart, col] = key.split('.') as [string, string];
    const cell = page.locator(`section[data-chart="${chart}"] tr[data-day="${day}"] td[data-col="${col}"]`);
    out[key] = (await cell.count()) ? ((await cell.textContent()) ?? '').trim() : '(no cell)';
  }
  return out;
}

/** The unit the ready-to-done table shows its times in (from its header, "Median (minutes)"), as seconds per unit. */
async function timeUnit(page: Page): Promise<number> {
  const header = await page.locator('section[data-chart="ready-to-done"] details th').nth(1).textContent();
  const unit = /\((\w+)\)/.exec(header ?? '')?.[1] ?? '';
  expect(Object.keys(UNITS), `the unit in "${header}"`).toContain(unit);
  return UNITS[unit]!;
}

/** GET /api/metrics with the page's own session (its cookies), as the page reads it. */
async function metricsOf(page: Page, projectId: string): Promise<{ days: Day[] } & Record<string, unknown>> {
  const res = await page.request.get(`/api/metrics?projectId=${projectId}`);
  expect(res.status()).toBe(200);
  return (await res.json()) as { days: Day[] };
}

/** Until every day's row in the page's tables equals the server's, read with the page's session. */
async function tablesMatch(page: Page, projectId: string, opts: { agents: boolean; times: boolean }): Promise<Day[]> {
  let days: Day[] = [];
  let last = '';
  await until(
    async () => {
      days = (await metricsOf(page, projectId)).days;
      const per = opts.times ? await timeUnit(page) : null;
      const want = days.map((d) => ({ day: d.day, ...expected(d, per, opts.agents) }));
      const got = [];
      for (const d of want) got.push({ day: d.day, ...(await shown(page, d.day, Object.keys(d).slice(1))) });
      last = `server ${JSON.stringify(want)}\npage   ${JSON.stringify(got)}`;
      return days.length > 0 && JSON.stringify(got) === JSON.stringify(want);
    },
    { timeout: 15_000, interval: 500, what: () => `the tables to equal GET /api/metrics:\n${last}` },
  );
  return days;
}

/** Pixels of each colour (a CSS custom property of the page) on a chart's canvas. */
function inked(page: Page, chart: string, colors: string[]): Promise<Record<string, number>> {
  return page.locator(`section[data-chart="${chart}"] canvas`).evaluate((canvas, names: string[]) => {
    const doc = canvas.ownerDocument;
    const style = doc.defaultView.getComputedStyle(doc.documentElement);
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const out: Record<string, number> = {};
    for (const name of names) {
      const hex = String(style.getPropertyValue(name)).trim();
      const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
      let n = 0;
      for (let i = 0; i < data.length; i += 4)
        if (Math.abs(data[i] - r) <= 6 && Math.abs(data[i + 1] - g) <= 6 && Math.abs(data[i + 2] - b) <= 6) n++;
      out[name] = n;
    }
    return out;
  }, colors);
}

/** Each chart drawn: its series' colours on its canvas (and in the flow, every state holding a tenth of the items or more). */
async function expectDrawn(page: Page, today: Day, opts: { times: boolean }): Promise<void> {
  const total = Object.values(today.counts ?? {}).reduce((a, b) => a + b, 0);
  const big = STATES.filter((st) => (today.counts?.[st] ?? 0) >= total / 10);
  expect(big.length).toBeGreaterThan(0);
  const flow = await inked(
    page,
    'flow',
    big.map((st) => `--state-${st}`),
  );
  for (const st of big)
    expect(flow[`--state-${st}`], `the flow's ${st} band (${JSON.stringify(flow)})`).toBeGreaterThan(50);
  const times = opts.times;
  const rates = today.verifyPassRate !== null || today.leaseExpiryRate !== null;
  const charts: [string, string[], boolean][] = [
    ['throughput', ['--state-done'], true],
    ['ready-to-done', ['--accent', '--state-claimed'], times],
    ['rates', ['--state-done', '--state-blocked'], rates],
    ['agents', ['--accent'], true],
  ];
  for (const [chart, colors, drawn] of charts) {
    // A chart with no value on any day says so instead of drawing empty axes.
    expect(await page.locator(`section[data-chart="${chart}"] [data-blank]`).count(), chart).toBe(drawn ? 0 : 1);
    if (!drawn) continue;
    const ink = await inked(page, chart, colors);
    expect(Math.max(...Object.values(ink)), `${chart} drawn in ${JSON.stringify(ink)}`).toBeGreaterThan(10);
  }
}

describe.skipIf(!chromium)('Insights: a board’s numbers as charts (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'insights', { LEASE_MIN_TTL_SECONDS: String(SHORT_TTL) });

  /** A viewer's tab on the board's Insights, reached from the board page's header as a person would. */
  async function openInsights(viewer: Client, projectId: string): Promise<BrowserPage & { metricsReads(): number }> {
    const t = await tabs.tab();
    let reads = 0;
    t.page.on('request', (r) => new URL(r.url()).pathname === '/api/metrics' && reads++);
    await t.context.addCookies([...viewer.cookies].map(([name, value]) => ({ name, value, url: tabs.server.url })));
    await t.page.goto(`/boards/${projectId}`);
    await t.page.locator('.conn[data-state="live"]').waitFor();
    await t.page.locator('.board-head').getByRole('link', { name: 'Insights' }).click();
    await landOn(t.page, `/boards/${projectId}/insights`);
    await t.page.locator('.insights-page .conn[data-state="live"]').waitFor();
    return { ...t, metricsReads: () => reads };
  }

  it(
    'shows a viewer the days of a board worked by a fleet for twenty seconds, equal to GET /api/metrics, and moves today’s numbers live',
    { timeout: 300_000 },
    async () => {
      const board = await newBoard(tabs.server.url);
      const { client: viewer, accountId } = await signedUp(tabs.server.url);
      await tabs.server.store.members.insert({
        _id: `${board.projectId}:${accountId}`,
        version: 1,
        projectId: board.projectId,
        accountId,
        role: 'viewer',
        acceptedAt: Date.now(),
      });
      const agents = [];
      for (let i = 1; i <= AGENTS; i++) agents.push(await board.agent(`fleet-${i}`));
      const dropper = await board.agent('dropper');

      // Empty: the page says so, then fills in from the socket as items arrive.
      const a = await openInsights(viewer, board.projectId);
      await a.page.locator('[data-empty]').waitFor();
      await screenshot(a.page, 'insights-empty');
      const items = Array.from({ length: ITEMS }, (_, i) => ({
        title: `Task ${i + 1}`,
        priority: i % 5,
        verify: i % 3 === 1 ? 'required' : 'none',
      }));
      expect((await agents[0]!.post('/api/items/batch', { items })).status).toBe(201);
      const today = new Date().toISOString().slice(0, 10);
      await until(async () => (await shown(a.page, today, ['flow.ready']))['flow.ready'] === int(ITEMS), {
        what: 'the flow table to show the new items as ready',
      });
      expect(a.metricsReads()).toBe(1);

      // Twenty seconds of work, with a few leases taken and left to run out.
      let dropped = 0;
      const fleet = runPacedFleet(
        tabs.server.url,
        agents.map((x) => ({ auth: { authorization: x.defaults.authorization! }, principal: x.principal })),
        { rate: PACE, ms: FLEET_MS },
      );
      const drops = (async () => {
        for (let i = 0; i < 6; i++) {
          await pace(FLEET_MS / 7);
          if ((await dropper.post('/api/claim', { ttlSeconds: SHORT_TTL })).status === 200) dropped++;
        }
      })();
      const [run] = await Promise.all([fleet, drops]);
      expect(run.statuses.get(429) ?? 0).toBe(0);
      expect(dropped).toBeGreaterThan(0);
      // Every lease ended (the dropped ones expired).
      await until(async () => {
        const c = (await board.owner.get(`/api/status?projectId=${board.projectId}`)).body.counts;
        return c.claimed === 0 && c.verifying === 0;
      });

      // The page open all along: every number it folded from the socket equals the server's.
      const days = await tablesMatch(a.page, board.projectId, { agents: false, times: false });
      const now = days.at(-1)!;
      console.log(`insights: today after the fleet ${JSON.stringify(now)}`);
      expect(now.day).toBe(today);
      expect(now.done).toBeGreaterThan(20);
      expect(now.verdicts).toBeGreaterThan(0);
      expect(now.expiries).toBeGreaterThanOrEqual(dropped);
      expect(a.metricsReads()).toBe(1);
      expect(now.readyToDoneSeconds.median).not.toBeNull();
      // Today's times are as of the page's read (the board was empty): drawn once the person reads again.
      await expectDrawn(a.page, now, { times: false });
      await screenshot(a.page, 'insights-after-fleet');
      await a.page.locator('section[data-chart="ready-to-done"]').getByRole('button', { name: 'Read again' }).click();
      await a.page.locator('section[data-chart="ready-to-done"] canvas').waitFor();
      expect(a.metricsReads()).toBe(2);
      await tablesMatch(a.page, board.projectId, { agents: true, times: true });
      await expectDrawn(a.page, now, { times: true });

      // A page opened now: the same numbers, agents and times too, every table a click away.
      const b = await openInsights(viewer, board.projectId);
      await b.page.locator('section[data-chart="flow"] canvas').waitFor();
      await tablesMatch(b.page, board.projectId, { agents: true, times: true });
      await expectDrawn(b.page, now, { times: true });
      await screenshot(b.page, 'insights-charts');
      for (const summary of await b.page.locator('.insight details > summary').all()) await summary.click();
      await b.page.locator('section[data-chart="rates"] tr[data-day]').first().waitFor();
      await screenshot(b.page, 'insights-tables');

      // One more of each: a lease taken and run out, an item made, claimed and done. No reload, no read.
      const before = (await shown(b.page, today, ['rates.grants', 'rates.expiries', 'throughput.done'])) as Record<
        string,
        string
      >;
      const plus = (key: string, n = 1) => int(Number(before[key]!.replace(/,/g, '')) + n);
      expect((await dropper.post('/api/claim', { ttlSeconds: SHORT_TTL })).status).toBe(200);
      await until(async () => (await shown(b.page, today, ['rates.grants']))['rates.grants'] === plus('rates.grants'), {
        what: 'today’s leases to move by one',
      });
      await until(
        async () => (await shown(b.page, today, ['rates.expiries']))['rates.expiries'] === plus('rates.expiries'),
        { what: 'today’s expiries to move by one' },
      );
      const made = await dropper.post('/api/items', { title: 'One more', priority: 0 });
      expect(made.status).toBe(201);
      const grant = await dropper.post('/api/claim', { workId: made.body.workId });
      expect(grant.status).toBe(200);
      expect((await dropper.post('/api/submit', { leaseId: grant.body.leaseId, head: head(9999) })).status).toBe(200);
      await until(
        async () => (await shown(b.page, today, ['throughput.done']))['throughput.done'] === plus('throughput.done'),
        { what: 'today’s done to move by one' },
      );
      await tablesMatch(b.page, board.projectId, { agents: true, times: false });
      expect(b.metricsReads()).toBe(1);
      expect(await b.page.locator('.insights-page').getAttribute('data-loads')).toBe('1');
      await screenshot(b.page, 'insights-one-more');

      // The board's columns wear the charts' colours.
      await b.page.locator('a', { hasText: 'Back to the board' }).click();
      await b.page.locator('.board-page .conn[data-state="live"]').waitFor();
      await screenshot(b.page, 'insights-board-columns');
      expect(a.problems).toEqual([]);
      expect(b.problems).toEqual([]);
      console.log(
        `insights: fleet ${run.cycles} cycles in ${run.seconds.toFixed(1)} s; today ${JSON.stringify({ ...now, counts: undefined })}`,
      );
    },
  );
  it('draws a month of days as areas, bars and lines, with times in minutes and the days before counts were kept left out', async () => {
    // The server keeps at most two days for a board made now: a month is answered here instead
    // (the page's own socket and columns stay real), to see the charts as a long-lived board shows them.
    const board = await newBoard(tabs.server.url);
    const agent = await board.agent('worker');
    const items = Array.from({ length: 30 }, (_, i) => ({ title: `Task ${i + 1}`, priority: i % 5 }));
    expect((await agent.post('/api/items/batch', { items })).status).toBe(201);
    for (let n = 1; n <= 15; n++) {
      const grant = await agent.post('/api/claim', {});
      expect(grant.status).toBe(200);
      if (n <= 12)
        expect((await agent.post('/api/submit', { leaseId: grant.body.leaseId, head: head(n) })).status).toBe(200);
    }
    const DAYS = 30;
    const days: Day[] = Array.from({ length: DAYS }, (_, i) => {
      const done = 2 + ((i * 3) % 7);
      const verdicts = 3 + (i % 3);
      const median = 300 + 40 * i;
      return {
        day: new Date(Date.now() - (DAYS - 1 - i) * 86_400_000).toISOString().slice(0, 10),
        done,
        grants: done + 2 + (i % 4),
        expiries: i % 4,
        verdicts,
        passes: verdicts - (i % 3 === 0 ? 1 : 0),
        readyToDoneSeconds: { median, p90: median * 2.2 },
        verifyPassRate: (verdicts - (i % 3 === 0 ? 1 : 0)) / verdicts,
        leaseExpiryRate: (i % 4) / (done + 2 + (i % 4)),
        agentsActive: 3 + (i % 6),
        counts:
          i < 4
            ? null
            : {
                pending: Math.max(0, 12 - i),
                ready: 15 + ((i * 5) % 9),
                claimed: 2 + (i % 3),
                awaiting_verify: 1 + (i % 4),
                verifying: i % 2,
                done: Math.round(i * 0.45),
                blocked: i % 9 === 0 ? 3 : 1,
                cancelled: Math.floor(i / 10),
              },
      };
    });
    const t = await tabs.tab();
    await t.page.route('**/api/metrics?*', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ days }) }),
    );
    await t.context.addCookies(
      [...board.owner.cookies].map(([name, value]) => ({ name, value, url: tabs.server.url })),
    );
    await t.page.goto(`/boards/${board.projectId}`);
    await t.page.locator('.board-head').getByRole('link', { name: 'Insights' }).click();
    await t.page.locator('.insights-page .conn[data-state="live"]').waitFor();
    await until(async () => (await shown(t.page, days.at(-1)!.day, ['flow.done']))['flow.done'] === '12', {
      what: 'today’s counts from the live columns',
    });
    expect(await t.page.locator('section[data-chart="flow"] tr[data-day]').count()).toBe(DAYS);
    expect(await timeUnit(t.page)).toBe(60);
    const before = days[2]!;
    expect(await shown(t.page, before.day, ['flow.ready', 'throughput.done', 'ready-to-done.median'])).toEqual({
      'flow.ready': '—',
      'throughput.done': int(before.done),
      'ready-to-done.median': oneDecimal(before.readyToDoneSeconds.median! / 60),
    });
    await expectDrawn(t.page, { ...days.at(-1)!, counts: days.at(-2)!.counts }, { times: true });
    await screenshot(t.page, 'insights-month');
    expect(t.problems).toEqual([]);
  });
});
