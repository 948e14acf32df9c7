// GET billing's interval refresh: when the provider cannot answer, the failure is logged and the
// state still goes out.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { committedAudit } from '../../src/board/committed-audit.js';
import { BillingService } from '../../src/billing/service.js';
import { createStripeProvider } from '../../src/billing/stripe.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { billingRecord } from '../support/billing.js';

const used = useStore();

describe('the billing state', () => {
  it('logs a failed interval refresh and answers without the interval', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'warn' },
      new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) }),
    );
    const provider = createStripeProvider({
      secretKey: 'sk_test_123',
      webhookSecret: 'whsec_x',
      apiBase: 'http://127.0.0.1:1',
    });
    const billing = new BillingService(
      used.store,
      { provider, prices: { monthly: 'pm', yearly: 'py' } },
      logger,
      committedAudit(used.store, logger),
    );
    const projectId = unique('proj');
    await used.store.billing.insert(billingRecord(projectId, 'acc', { subscriptionId: 'sub_1', status: 'active' }));
    const state = await billing.state(projectId, Date.now());
    expect(state).toMatchObject({
      plan: 'pro',
      subscription: { status: 'active', interval: null },
      providerAvailable: true,
    });
    // The prices' read fails too (it logs on its own): the interval's refresh is told once.
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; projectId: string });
    expect(logged.filter((l) => /interval/.test(l.msg))).toEqual([
      expect.objectContaining({ msg: expect.stringMatching(/interval could not be refreshed/), projectId }),
    ]);
  });
});
