// The account's Billing section in Chromium against stripe-mock: Free with both upgrades, the
// checkout button going to the provider's hosted page, and Pro (after a signed webhook) with the
// switch to yearly; the board it is for named, what Pro costs, and when a past-due board turns Free.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, openPage, screenshot, startBrowserServer, signUpInPage } from '../support/browser.js';
import { Client, type TestServer } from '../support/server.js';
import { unique } from '../support/temp.js';
import { billingRecord, deliverSigned } from '../support/billing.js';
import { PAST_DUE_GRACE_MS } from '../../src/billing/plan.js';

const chromium = inject('chromium');
const stripeBase = inject('stripeBase');
const SECRET = 'whsec_browser_billing';
const PRICES = { month: 'price_pro_monthly', year: 'price_pro_yearly' };

describe.skipIf(!chromium || !stripeBase)('the Billing section (Chromium, stripe-mock)', () => {
  let browser: Browser;
  let server: TestServer;
  beforeAll(async () => {
    [browser, server] = await Promise.all([
      launchChromium(chromium!),
      startBrowserServer({
        STRIPE_SECRET_KEY: 'sk_test_123',
        STRIPE_WEBHOOK_SECRET: SECRET,
        STRIPE_PRICE_MONTHLY: PRICES.month,
        STRIPE_PRICE_YEARLY: PRICES.year,
        STRIPE_API_BASE: stripeBase!,
        REVENUE_PRO_MONTHLY_USD: '12',
        REVENUE_PRO_YEARLY_USD: '120',
      }),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('upgrades through the provider’s checkout, then shows Pro with the switch to yearly', async () => {
    const tab = await openPage(browser, server);
    const { page } = tab;
    const email = `${unique('billing')}@example.com`;
    await signUpInPage(page, email);

    await page.goto('/account/billing');
    const section = page.locator('section[aria-labelledby="billing"]');
    await section.getByText('Free', { exact: true }).waitFor();
    // The provider's hosted page is elsewhere: answer it here, and see the page go there.
    const hosted: string[] = [];
    await page.route(
      /^https:\/\/(checkout|billing)\.stripe\.com\//,
      (route) => (
        hosted.push(route.request().url()),
        route.fulfill({ status: 200, contentType: 'text/html', body: '<title>provider</title>' })
      ),
    );
    await section.getByRole('button', { name: 'Upgrade to Pro, monthly' }).click();
    await expect.poll(() => hosted.length).toBe(1);
    await page.waitForURL(/^https:\/\/checkout\.stripe\.com\//, { waitUntil: 'load' }); // landed there (a navigation cut short would count as a failed load)

    // The provider confirms: a signed subscription event for the customer checkout attached.
    const owner = new Client(server.url);
    await owner.post('/api/auth/login', { email, password: 'correct horse battery staple' });
    const projectId = (await owner.get('/api/projects')).body.projects[0].projectId as string;
    const customer = (await server.store.billing.get(projectId))!.customerId;
    const body = JSON.stringify({
      id: `evt_${unique('b')}`,
      object: 'event',
      type: 'customer.subscription.created',
      created: Math.floor(Date.now() / 1000),
      data: {
        object: {
          id: 'sub_browser',
          object: 'subscription',
          customer,
          status: 'active',
          cancel_at_period_end: false,
          current_period_end: Math.floor(Date.now() / 1000) + 30 * 86400,
          metadata: { projectId },
          items: { data: [{ price: { id: PRICES.month } }] },
        },
      },
    });
    const delivered = await deliverSigned(server.url, body, SECRET);
    expect(delivered.status).toBe(200);

    await page.goto('/account/billing?checkout=success');
    await section.getByText('Pro', { exact: true }).waitFor();
    await section.getByText('active, billed monthly').waitFor();
    await section.getByText('Payment received by the provider').waitFor();
    await section.getByRole('button', { name: 'Switch to yearly' }).waitFor();
    await section.locator('li', { hasText: 'customer.subscription.created' }).first().waitFor();
    await screenshot(page, 'account-billing');
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it('names the board, shows what Pro costs, and when a past-due board turns Free', async () => {
    const tab = await openPage(browser, server);
    const { page } = tab;
    const email = `${unique('billing-due')}@example.com`;
    await signUpInPage(page, email);
    const owner = new Client(server.url);
    await owner.post('/api/auth/login', { email, password: 'correct horse battery staple' });
    const accountId = (await owner.get('/api/auth/me')).body.user.id as string;
    const projectId = (await owner.get('/api/projects')).body.projects[0].projectId as string;
    expect(
      (await owner.request('PATCH', `/api/projects/${projectId}`, { json: { name: 'Payments rewrite' } })).status,
    ).toBe(200);
    const since = Date.now() - 2 * 86_400_000;
    await server.store.billing.insert(
      billingRecord(projectId, accountId, {
        subscriptionId: 'sub_due',
        status: 'past_due',
        interval: 'month',
        priceId: PRICES.month,
        pastDueSince: since,
      }),
    );
    const freeAt = new Date(since + PAST_DUE_GRACE_MS).toISOString();

    await page.goto('/account/billing');
    const section = page.locator('section[aria-labelledby="billing"]');
    const fact = (name: string) => section.locator('dl.facts .row', { has: page.locator('dt', { hasText: name }) });
    await fact('Board').getByRole('link', { name: 'Payments rewrite' }).waitFor();
    expect(await fact('Plan').locator('dd').innerText()).toBe('Pro');
    // What the provider's prices charge (stripe-mock's: 20 USD each), not the configured figures.
    expect(await fact('Pro costs').locator('dd').innerText()).toBe('$20 a month, or $20 a year');
    expect(await fact('Turns Free on').locator('time').getAttribute('datetime')).toBe(freeAt);
    const note = section.getByRole('status').filter({ hasText: 'The last payment failed' });
    expect(await note.innerText()).toContain('“Payments rewrite” stays Pro until');
    expect(await note.locator('time').getAttribute('datetime')).toBe(freeAt);
    await screenshot(page, 'account-billing-past-due');
    expect(tab.problems).toEqual([]);
    await tab.close();
  });
});
