// Operator routes: money (DOMAIN.md "Operators"). Rules live in src/admin/money.ts; these only bind them.
import { z } from 'zod';
import { MoneyDesk } from '../admin/money.js';
import { PROJECT_ID } from '../auth/project-selection.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import { adminBase, PageQuery, Reason } from './admin-shared.js';

const ProjectId = z.string().regex(PROJECT_ID, 'must be 1 to 64 letters, digits, "-" or "_"');
const Iso = z.string().nullable();

const Billing = z.object({
  payerAccountId: z.string(),
  customerId: z.string(),
  subscriptionId: z.string().nullable(),
  status: z.string().nullable(),
  interval: z.enum(['month', 'year']).nullable(),
  priceId: z.string().nullable(),
  currentPeriodEnd: Iso,
  cancelAtPeriodEnd: z.boolean(),
  changedAt: Iso.describe('Provider time of the last applied subscription change (a re-read counts as now).'),
  overdueSince: Iso.describe('When the subscription became past_due or unpaid; null otherwise.'),
});
const Plan = z.enum(['free', 'pro']);
const Complimentary = z.object({ plan: z.literal('pro'), until: z.string() });
const Outcome = z.enum(['applied', 'duplicate', 'ignored', 'failed']);
const ProviderEventRow = z.object({
  eventId: z.string(),
  type: z.string(),
  outcome: Outcome,
  projectId: z.string().nullable(),
  at: z.string(),
  requestId: z.string().nullable(),
  replay: z.boolean(),
});

const DunningResponse = z.object({
  boards: z.array(
    z
      .object({
        projectId: z.string(),
        name: z.string().nullable(),
        ownerId: z.string().nullable(),
        plan: Plan.nullable(),
        billingPlan: Plan,
        daysOverdue: z.number().int().nullable(),
      })
      .extend(Billing.shape),
  ),
  nextCursor: z.string().nullable(),
});
const AccountBillingResponse = z.object({
  account: z.object({ id: z.string(), email: z.string(), deletedAt: Iso }),
  boards: z.array(
    z.object({
      projectId: z.string(),
      name: z.string().nullable(),
      ownerId: z.string().nullable(),
      plan: Plan.nullable(),
      billingPlan: Plan,
      complimentary: Complimentary.nullable(),
      billing: Billing.nullable(),
      events: z.array(ProviderEventRow),
    }),
  ),
});
const SubscriptionBody = z.strictObject({ projectId: ProjectId, reason: Reason.optional() });
const SubscriptionResponse = z.object({ projectId: z.string(), plan: Plan, billing: Billing });
const PlanBody = z.strictObject({
  projectId: ProjectId,
  plan: z.literal('pro').describe('The plan granted (Pro, the one paid plan).'),
  until: z.iso
    .datetime({ offset: true })
    .describe('When it ends by itself (ISO 8601, in the future, within 366 days); then the plan is what billing says.'),
  reason: Reason,
});
const PlanResponse = z.object({ projectId: z.string(), plan: Plan, billingPlan: Plan, complimentary: Complimentary });
const RefundBody = z.strictObject({
  projectId: ProjectId,
  reason: Reason,
  amount: z
    .number()
    .int()
    .min(1)
    .max(100_000_000)
    .optional()
    .describe('In the smallest currency unit (cents); absent: the whole payment.'),
});
const RefundResponse = z.object({
  projectId: z.string(),
  refund: z.object({
    refundId: z.string(),
    invoiceId: z.string(),
    amount: z.number().int(),
    currency: z.string(),
    status: z.string(),
    paymentId: z.string(),
  }),
});
const WebhooksResponse = z.object({ events: z.array(ProviderEventRow), nextCursor: z.string().nullable() });
const ReplayBody = z.strictObject({ reason: Reason.optional() }).optional();
const ReplayResponse = z.object({
  eventId: z.string(),
  type: z.string(),
  projectId: z.string().nullable(),
  handled: z.boolean(),
  outcome: Outcome,
});

const PROVIDER = [
  'PROVIDER_UNAVAILABLE',
  'PROVIDER_REQUEST_FAILED',
  'PROVIDER_RESPONSE_INVALID',
  'BILLING_UNAVAILABLE',
] as const;

/** What the admin-money routes use of the server's dependencies. */
export type AdminMoneyDeps = Pick<RouteDeps, 'store' | 'billing'>;

export function adminMoneyRoutes(deps: AdminMoneyDeps): Route[] {
  const desk = new MoneyDesk(deps.store, deps.billing);
  return [
    defineRoute<undefined, z.infer<typeof PageQuery>>({
      ...adminBase,
      method: 'get',
      path: '/api/admin/billing/dunning',
      summary: 'Boards whose subscription is past_due or unpaid, most recently overdue first, with days overdue.',
      bodyKind: 'none',
      query: PageQuery,
      errors: ['INVALID_CURSOR', 'INVALID_INPUT'],
      responses: { 200: { description: 'A page of boards in dunning.', schema: DunningResponse } },
      handler: async ({ ctx, query }) => ({ status: 200, body: await desk.dunning(query, ctx.now) }),
    }),
    defineRoute({
      ...adminBase,
      method: 'get',
      path: '/api/admin/billing/{userId}',
      summary:
        'An account’s billing: the boards it owns or pays for, with billing records, provider ids and received provider events.',
      bodyKind: 'none',
      errors: ['NOT_FOUND'],
      responses: { 200: { description: 'The account’s billing.', schema: AccountBillingResponse } },
      handler: async ({ ctx }) => ({ status: 200, body: await desk.accountBilling(ctx.params.userId!, ctx.now) }),
    }),
    defineRoute<z.infer<typeof SubscriptionBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: '/api/admin/users/{userId}/subscription',
      summary:
        'Re-read the board’s subscription from the provider and settle its billing record and plan (as a subscription event would).',
      description:
        'The board must be owned by the account. The provider is asked before anything is written: unreachable, 502 PROVIDER_UNAVAILABLE and nothing changed. A subscription the provider holds under another customer is 409 BILLING_CUSTOMER_CONFLICT.',
      bodyKind: 'json',
      body: SubscriptionBody,
      errors: ['NOT_FOUND', 'BILLING_SUBSCRIPTION_REQUIRED', 'BILLING_CUSTOMER_CONFLICT', ...PROVIDER],
      responses: { 200: { description: 'The settled billing state.', schema: SubscriptionResponse } },
      handler: async ({ ctx, body }) => ({ status: 200, body: await desk.reread(ctx, ctx.params.userId!, body) }),
    }),
    defineRoute<z.infer<typeof PlanBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: '/api/admin/plan',
      summary:
        'A complimentary plan for a board until `until`; it ends by itself, and the plan is then what billing says.',
      description: 'Replaces a complimentary plan in force. The billing sweep (every minute) ends it at `until`.',
      bodyKind: 'json',
      body: PlanBody,
      errors: ['NOT_FOUND'],
      responses: { 200: { description: 'The board’s plan now.', schema: PlanResponse } },
      handler: async ({ ctx, body }) => ({ status: 200, body: await desk.grantPlan(ctx, body) }),
    }),
    defineRoute<z.infer<typeof RefundBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: '/api/admin/users/{userId}/refund',
      summary:
        'Refund, through the provider, the latest paid invoice of the board’s subscription (all of it, or `amount`).',
      description:
        'The board must be owned by the account. A retried request (the same X-Request-Id) is one refund at the provider. Unreachable provider: 502 PROVIDER_UNAVAILABLE and nothing changed.',
      bodyKind: 'json',
      body: RefundBody,
      errors: ['NOT_FOUND', 'BILLING_SUBSCRIPTION_REQUIRED', 'BILLING_PAID_INVOICE_REQUIRED', ...PROVIDER],
      responses: { 200: { description: 'The refund the provider made.', schema: RefundResponse } },
      handler: async ({ ctx, body }) => ({ status: 200, body: await desk.refund(ctx, ctx.params.userId!, body) }),
    }),
    defineRoute<undefined, z.infer<typeof PageQuery>>({
      ...adminBase,
      method: 'get',
      path: '/api/admin/webhooks',
      summary: 'Provider events received (id, type, outcome of each delivery or replay), newest first.',
      bodyKind: 'none',
      query: PageQuery,
      errors: ['INVALID_CURSOR', 'INVALID_INPUT'],
      responses: {
        200: {
          description: 'A page of provider events; a page may hold fewer than `limit` (pending rows are left out).',
          schema: WebhooksResponse,
        },
      },
      handler: async ({ query }) => ({ status: 200, body: await desk.webhooks(query) }),
    }),
    defineRoute<z.infer<typeof ReplayBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: '/api/admin/webhooks/{eventId}/replay',
      summary:
        'Fetch a provider event again and apply it as a delivery would, once per event id (an event applied before changes nothing).',
      description:
        'Unreachable provider: 502 PROVIDER_UNAVAILABLE and nothing changed. An event of a customer attached to none of our boards is 400 PROVIDER_EVENT_ACCOUNT_MISMATCH, after its audit rows.',
      bodyKind: 'optional-json',
      body: ReplayBody,
      errors: ['NOT_FOUND', 'PROVIDER_EVENT_INVALID', 'PROVIDER_EVENT_ACCOUNT_MISMATCH', ...PROVIDER],
      responses: { 200: { description: 'What came of the event.', schema: ReplayResponse } },
      handler: async ({ ctx, body }) => ({
        status: 200,
        body: await desk.replay(ctx, ctx.params.eventId!, body?.reason ?? null),
      }),
    }),
  ];
}
