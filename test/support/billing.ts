// Billing fixtures for tests: a project's billing record as checkout leaves it, and a webhook
// delivery signed with the Stripe SDK's test-header helper, as Stripe would send it.
import Stripe from 'stripe';
import type { BillingRecord } from '../../store/ports/store.js';
import { Client, type Res } from './server.js';
import { unique } from './temp.js';

/** A billing record with a customer attached and no subscription yet, with `over` applied. */
export function billingRecord(projectId: string, accountId: string, over: Partial<BillingRecord> = {}): BillingRecord {
  return { _id: projectId, version: 1, accountId, customerId: `cus_${unique('c')}`, subscriptionId: null, status: null, interval: null, priceId: null, currentPeriodEnd: null, cancelAtPeriodEnd: false, changedAt: null, pastDueSince: null, ...over };
}

/** POSTs `body` to the webhook with a valid Stripe-Signature for `secret`. */
export function deliverSigned(baseUrl: string, body: string, secret: string): Promise<Res> {
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret });
  return new Client(baseUrl).request('POST', '/api/billing/webhook', { raw: body, headers: { 'content-type': 'application/json', 'stripe-signature': signature } });
}
