// Billing operations (contract Part 4 "Billing"): the selected project's billing state and its
// audit rows, and the provider's webhook. Rules live in src/billing/service.ts.
import { originOf } from '../audit-row.js';
import { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type RequestContext, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';

const Interval = z.enum(['month', 'year']);
export const AccountBillingResponse = z.object({
  projectId: z.string(),
  plan: z.enum(['free', 'pro']),
  subscription: z
    .object({
      status: z.string(),
      interval: Interval.nullable(),
      currentPeriodEnd: z.string().nullable(),
      cancelAtPeriodEnd: z.boolean(),
      graceEndsAt: z
        .string()
        .nullable()
        .describe(
          'A past_due subscription: when its 7-day grace ends and the board turns Free unless the payment goes through first (ISO time). Null for any other status.',
        ),
    })
    .nullable(),
  providerAvailable: z.boolean(),
  upgradeOptions: z.array(
    z.object({
      plan: z.literal('pro'),
      interval: Interval,
      priceUsd: z
        .number()
        .nullable()
        .describe(
          'What Pro costs at this interval, in US dollars: the payment provider’s price, else the deployment’s configured figure; null when neither says.',
        ),
    }),
  ),
});
/** `interval` is required (INVALID_INPUT when absent); any value but month or year is INVALID_BILLING_INTERVAL, refused before the budget is drawn. */
const CheckoutBody = z.strictObject({
  interval: z
    .string()
    .check((ctx) => {
      if (ctx.value !== 'month' && ctx.value !== 'year')
        throw new AppError('INVALID_BILLING_INTERVAL', 'interval must be month or year.');
    })
    .meta({ enum: ['month', 'year'] }),
});
const NoBody = z.strictObject({}).optional();
const BillingUrlResponse = z.object({ url: z.string() });
const AnnualBillingResponse = z.object({ changed: z.boolean() });
const PROVIDER_ERRORS = [
  'PROVIDER_REQUEST_FAILED',
  'PROVIDER_RESPONSE_INVALID',
  'PROVIDER_UNAVAILABLE',
  'BILLING_UNAVAILABLE',
] as const;
const BillingWebhookResponse = z.object({ received: z.literal(true), handled: z.boolean() });
const BillingAuditResponse = z.object({
  events: z.array(
    z.object({
      eventId: z.string(),
      type: z.string(),
      outcome: z.enum(['pending', 'applied', 'duplicate', 'ignored', 'failed']),
      requestId: z.string(),
      at: z.string(),
    }),
  ),
});

/** What the billing routes use of the server's dependencies. */
export type BillingDeps = Pick<RouteDeps, 'config' | 'store' | 'billing'>;

export function billingRoutes(deps: BillingDeps): Route[] {
  const { billing } = deps;
  const group = 'billing';
  const account = { group, auth: 'session', project: 'owned', bodyKind: 'none', rate: 'none' } as const;
  /** Checkout and portal draw on the shared board bucket (write class, `user:<id>`, the project's plan) after validation, CSRF, session and project, and before the provider. */
  const providerCall = { group, auth: 'session', project: 'owned', rate: 'write', rateHeaders: true } as const;
  const returnUrl = `${deps.config.publicUrl}/account/billing`;
  const owner = async (ctx: RequestContext) => {
    const account = await deps.store.accounts.get(ctx.identity!.accountId);
    if (!account) throw new AppError('UNAUTHENTICATED');
    return { id: account._id, email: account.email };
  };
  return [
    defineRoute<z.infer<typeof CheckoutBody>, undefined>({
      ...providerCall,
      method: 'post',
      path: '/api/account/billing/checkout',
      refusedWhileImpersonating: true,
      summary: 'A provider-hosted checkout URL for Pro at `interval` (owner only).',
      description:
        'The provider customer is created and attached first when absent (another attached meanwhile: 409 BILLING_CUSTOMER_CONFLICT). A board with a live subscription gets 409 BILLING_SUBSCRIPTION_CONFLICT. A board has one open checkout session: while the last one is open at the provider, the same interval answers its URL again and another interval expires it first, then opens a new one. Once that session was paid, checkout answers 409 BILLING_SUBSCRIPTION_CONFLICT until the board follows the subscription it made (or that subscription ended). No idempotency key: any other accepted call may create a provider session.',
      bodyKind: 'json',
      body: CheckoutBody,
      errors: [
        'INVALID_BILLING_INTERVAL',
        'INVALID_PROJECT_ID',
        'PROJECT_SCOPE_DENIED',
        'PROJECT_REQUIRED',
        'BILLING_CUSTOMER_CONFLICT',
        'BILLING_SUBSCRIPTION_CONFLICT',
        ...PROVIDER_ERRORS,
      ],
      responses: { 201: { description: 'Open `url` to pay.', schema: BillingUrlResponse } },
      async handler({ ctx, body }) {
        return {
          status: 201,
          body: await billing.checkout(ctx.project!.id, await owner(ctx), body.interval as 'month' | 'year', returnUrl),
        };
      },
    }),
    defineRoute<z.infer<typeof NoBody>, undefined>({
      ...providerCall,
      method: 'post',
      path: '/api/account/billing/portal',
      refusedWhileImpersonating: true,
      summary: 'A provider-hosted customer-portal URL (owner only; the board must have a provider customer).',
      bodyKind: 'optional-json',
      body: NoBody,
      errors: [
        'INVALID_PROJECT_ID',
        'PROJECT_SCOPE_DENIED',
        'PROJECT_REQUIRED',
        'BILLING_CUSTOMER_REQUIRED',
        ...PROVIDER_ERRORS,
      ],
      responses: { 201: { description: 'Open `url` to manage the subscription.', schema: BillingUrlResponse } },
      async handler({ ctx }) {
        return { status: 201, body: await billing.portal(ctx.project!.id, returnUrl) };
      },
    }),
    defineRoute<z.infer<typeof NoBody>, undefined>({
      group,
      auth: 'session',
      project: 'owned',
      rate: 'none',
      method: 'post',
      path: '/api/account/billing/annual',
      refusedWhileImpersonating: true,
      summary:
        'Move a live monthly Pro subscription to the yearly price (idempotent: already yearly is `changed: false`, with no provider call).',
      bodyKind: 'optional-json',
      body: NoBody,
      errors: [
        'INVALID_PROJECT_ID',
        'PROJECT_SCOPE_DENIED',
        'PROJECT_REQUIRED',
        'BILLING_SUBSCRIPTION_REQUIRED',
        'BILLING_PRO_REQUIRED',
        'BILLING_SUBSCRIPTION_CONFLICT',
        'BILLING_INTERVAL_UNSUPPORTED',
        ...PROVIDER_ERRORS,
      ],
      responses: { 200: { description: 'Whether the price changed.', schema: AnnualBillingResponse } },
      async handler({ ctx }) {
        return { status: 200, body: await billing.annual(ctx.project!.id, ctx.now) };
      },
    }),
    defineRoute({
      ...account,
      method: 'get',
      path: '/api/account/billing',
      summary: 'The selected project’s plan, subscription and upgrade options.',
      description:
        'Owner only (another member gets 403 PROJECT_SCOPE_DENIED). A subscription interval missing from the record is refreshed from the provider; when that fails it is logged and the answer goes out without it. `providerAvailable` is false when billing is not configured on this deployment.',
      errors: ['INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'PROJECT_REQUIRED'],
      responses: { 200: { description: 'Billing state.', schema: AccountBillingResponse } },
      async handler({ ctx }) {
        return { status: 200, body: await billing.state(ctx.project!.id, ctx.now) };
      },
    }),
    defineRoute({
      ...account,
      method: 'get',
      path: '/api/account/billing/events',
      summary:
        'The provider deliveries recorded for the selected project, newest first: a pending and a terminal row each.',
      errors: ['INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'PROJECT_REQUIRED'],
      responses: { 200: { description: 'Audit rows.', schema: BillingAuditResponse } },
      async handler({ ctx }) {
        const rows = await deps.store.audit.find(
          { projectId: ctx.project!.id, action: 'billing.webhook' },
          { sort: [['at', -1]], limit: 200 },
        );
        return {
          status: 200,
          body: {
            events: rows.map((r) => ({
              ...(r.data as { eventId: string; type: string; outcome: 'pending'; requestId: string }),
              at: new Date(r.at).toISOString(),
            })),
          },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/billing/webhook',
      group,
      summary: 'The payment provider’s events, verified by their signature over the raw body.',
      description:
        'Stripe-Signature is checked with the SDK (300 s tolerance) before anything is written. Handled: checkout.session.completed, customer.subscription.created/updated/deleted, invoice.paid, invoice.payment_failed; other types are acknowledged with `handled: false`. Effects apply once per event id; an event older than the last applied change does not overwrite it; every valid delivery, duplicates included, writes a pending and a terminal audit row. A delivery naming a deleted board cancels that board’s charging subscriptions at the provider at once (audited as billing.subscription.cancel; the provider away: 500, so it is delivered again).',
      auth: 'none',
      bodyKind: 'raw',
      rate: 'none',
      errors: [
        'PROVIDER_SIGNATURE_INVALID',
        'PROVIDER_EVENT_INVALID',
        'PROVIDER_EVENT_ACCOUNT_MISMATCH',
        'BILLING_UNAVAILABLE',
      ],
      responses: { 200: { description: 'Received.', schema: BillingWebhookResponse } },
      async handler({ ctx, raw }) {
        return {
          status: 200,
          body: await billing.webhook(raw, ctx.headers['stripe-signature'], originOf(ctx), ctx.now),
        };
      },
    }),
  ];
}
