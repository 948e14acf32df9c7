// Billing operations (contract Part 4 "Billing"): the selected project's billing state and its
// audit rows, and the provider's webhook. Rules live in src/billing/service.ts.
import { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type RequestContext, type Route } from '../http/route.js';
import type { BillingService } from '../billing/service.js';
import type { RouteDeps } from './deps.js';

const Interval = z.enum(['month', 'year']);
export const AccountBillingResponse = z.object({
  projectId: z.string(),
  plan: z.enum(['free', 'pro']),
  subscription: z.object({ status: z.string(), interval: Interval.nullable(), currentPeriodEnd: z.string().nullable(), cancelAtPeriodEnd: z.boolean() }).nullable(),
  providerAvailable: z.boolean(),
  upgradeOptions: z.array(z.object({ plan: z.literal('pro'), interval: Interval })),
});
const BillingWebhookResponse = z.object({ received: z.literal(true), handled: z.boolean() });
const BillingAuditResponse = z.object({
  events: z.array(z.object({ eventId: z.string(), type: z.string(), outcome: z.enum(['pending', 'applied', 'duplicate', 'ignored', 'failed']), requestId: z.string(), at: z.string() })),
});

/** Billing treats a project the caller does not own as unreachable (DOMAIN.md). */
function ownedProject(ctx: RequestContext): string {
  if (!ctx.project!.owned) throw new AppError('PROJECT_SCOPE_DENIED', 'Only the board’s owner handles its billing.');
  return ctx.project!.id;
}

export function billingRoutes(deps: RouteDeps, billing: BillingService): Route[] {
  const group = 'billing';
  const account = { group, auth: 'session', project: 'required', bodyKind: 'none', rate: 'none' } as const;
  return [
    defineRoute({
      ...account,
      method: 'get',
      path: '/api/account/billing',
      summary: 'The selected project’s plan, subscription and upgrade options.',
      description: 'Owner only (another member gets 403 PROJECT_SCOPE_DENIED). A subscription interval missing from the record is refreshed from the provider; when that fails it is logged and the answer goes out without it. `providerAvailable` is false when billing is not configured on this deployment.',
      errors: ['INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'PROJECT_REQUIRED'],
      responses: { 200: { description: 'Billing state.', schema: AccountBillingResponse } },
      async handler({ ctx }) {
        return { status: 200, body: await billing.state(ownedProject(ctx), ctx.now) };
      },
    }),
    defineRoute({
      ...account,
      method: 'get',
      path: '/api/account/billing/events',
      summary: 'The provider deliveries recorded for the selected project, newest first: a pending and a terminal row each.',
      errors: ['INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'PROJECT_REQUIRED'],
      responses: { 200: { description: 'Audit rows.', schema: BillingAuditResponse } },
      async handler({ ctx }) {
        const rows = await deps.store.audit.find({ projectId: ownedProject(ctx), action: 'billing.webhook' }, { sort: [['at', -1]], limit: 200 });
        return { status: 200, body: { events: rows.map((r) => ({ ...(r.data as { eventId: string; type: string; outcome: 'pending'; requestId: string }), at: new Date(r.at).toISOString() })) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/billing/webhook',
      group,
      summary: 'The payment provider’s events, verified by their signature over the raw body.',
      description:
        'Stripe-Signature is checked with the SDK (300 s tolerance) before anything is written. Handled: checkout.session.completed, customer.subscription.created/updated/deleted, invoice.paid, invoice.payment_failed; other types are acknowledged with `handled: false`. Effects apply once per event id; an event older than the last applied change does not overwrite it; every valid delivery, duplicates included, writes a pending and a terminal audit row.',
      auth: 'none',
      bodyKind: 'raw',
      rate: 'none',
      errors: ['PROVIDER_SIGNATURE_INVALID', 'PROVIDER_EVENT_INVALID', 'PROVIDER_EVENT_ACCOUNT_MISMATCH', 'BILLING_UNAVAILABLE'],
      responses: { 200: { description: 'Received.', schema: BillingWebhookResponse } },
      async handler({ ctx, raw }) {
        return { status: 200, body: await billing.webhook(raw, ctx.headers['stripe-signature'], ctx.requestId, ctx.now) };
      },
    }),
  ];
}
