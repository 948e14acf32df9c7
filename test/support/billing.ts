// Billing fixtures for tests: a project's billing record as checkout leaves it, and a webhook
// delivery signed with the Stripe SDK's test-header helper, as Stripe would send it.
import { pino } from 'pino';
import Stripe from 'stripe';
import { committedAudit } from '../../src/board/committed-audit.js';
import { BillingReconciler } from '../../src/billing/reconcile.js';
import type { BillingSetup } from '../../src/billing/service.js';
import type { ProviderEvent } from '../../src/billing/provider.js';
import type { BillingRecord, Store } from '../../store/ports/store.js';
import { Client, type Res } from './server.js';
import { unique } from './temp.js';

/** A billing record with a customer attached and no subscription yet, with `over` applied. */
export function billingRecord(projectId: string, accountId: string, over: Partial<BillingRecord> = {}): BillingRecord {
  return {
    _id: projectId,
    version: 1,
    accountId,
    customerId: `cus_${unique('c')}`,
    subscriptionId: null,
    status: null,
    interval: null,
    priceId: null,
    currentPeriodEnd: null,
    cancelAtPeriodEnd: false,
    changedAt: null,
    pastDueSince: null,
    ...over,
  };
}

/** A Free board of account `acc` in `store`, with a billing record whose customer is attached (no subscription yet). */
export async function billedBoard(
  store: Pick<Store, 'projects' | 'billing'>,
): Promise<{ projectId: string; customer: string }> {
  const projectId = unique('proj');
  const customer = `cus_${unique('c')}`;
  await store.projects.insert({
    _id: projectId,
    version: 1,
    name: projectId,
    ownerId: 'acc',
    plan: 'free',
    createdAt: 0,
    lastActivityAt: 0,
  });
  await store.billing.insert(billingRecord(projectId, 'acc', { customerId: customer }));
  return { projectId, customer };
}

/** A delivery of `type` about the board's subscription `sub` in `status`, made at `created`, on `priceId`, naming the board. */
export const boardSubscriptionEvent = (
  board: { projectId: string; customer: string },
  type: string,
  sub: string,
  status: string,
  created: number,
  priceId: string,
): ProviderEvent => ({
  id: `evt_${unique('e')}`,
  type,
  created,
  object: {
    id: sub,
    customer: board.customer,
    status,
    metadata: { projectId: board.projectId },
    items: { data: [{ price: { id: priceId } }] },
  },
});

/** POSTs `body` to the webhook with a valid Stripe-Signature for `secret`. */
export function deliverSigned(baseUrl: string, body: string, secret: string): Promise<Res> {
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret });
  return new Client(baseUrl).request('POST', '/api/billing/webhook', {
    raw: body,
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
  });
}

/**
 * Billing configured for makePro: the webhook secret and the two prices, and an API base nothing
 * listens on (making a board Pro through the webhook never calls Stripe's API).
 */
export const webhookOnlyBilling = (webhookSecret: string): Record<string, string> => ({
  STRIPE_SECRET_KEY: 'sk_test_webhook_only',
  STRIPE_WEBHOOK_SECRET: webhookSecret,
  STRIPE_PRICE_MONTHLY: 'price_m',
  STRIPE_PRICE_YEARLY: 'price_y',
  STRIPE_API_BASE: 'http://127.0.0.1:1',
});

/**
 * Makes the board Pro the way production does: a customer attached to it (as checkout leaves it),
 * then a signed customer.subscription.created event for that customer, active on `price`.
 */
export async function makePro(
  baseUrl: string,
  store: Pick<Store, 'billing'>,
  board: { owner: Client; projectId: string },
  secret: string,
  price = 'price_m',
): Promise<void> {
  const customer = `cus_${unique('pro')}`;
  const accountId = (await board.owner.get('/api/auth/me')).body.user.id as string;
  await store.billing.insert(billingRecord(board.projectId, accountId, { customerId: customer }));
  const subscription = {
    id: `sub_${customer}`,
    object: 'subscription',
    customer,
    status: 'active',
    cancel_at_period_end: false,
    metadata: { projectId: board.projectId },
    items: { data: [{ price: { id: price } }] },
  };
  const body = JSON.stringify({
    id: `evt_${unique('pro')}`,
    object: 'event',
    type: 'customer.subscription.created',
    created: Math.floor(Date.now() / 1000),
    data: { object: subscription },
  });
  const res = await deliverSigned(baseUrl, body, secret);
  if (res.status !== 200) throw new Error(`webhook: ${res.status} ${res.text}`);
}

const quiet = pino({ level: 'silent' });

/** The reconcile pass over `store`, as the node makes it (its audit rows written as the node's are), with nothing logged. */
export const reconcilerOn = (
  store: Store,
  setup: BillingSetup | null,
  options: { intervalMs: number; maxCalls: number } = { intervalMs: 3_600_000, maxCalls: 100 },
): BillingReconciler => new BillingReconciler(store, setup, quiet, options, committedAudit(store, quiet));
