// Billing as configured: the Stripe provider and our two Pro prices when STRIPE_SECRET_KEY,
// STRIPE_WEBHOOK_SECRET, STRIPE_PRICE_MONTHLY and STRIPE_PRICE_YEARLY are all set (STRIPE_API_BASE
// points the SDK elsewhere, e.g. at stripe-mock); null otherwise, and billing answers 503.
import type { Config } from '../config.js';
import type { BillingSetup } from './service.js';
import { createStripeProvider } from './stripe.js';

export function billingSetupFrom(config: Config): BillingSetup | null {
  const { secretKey, webhookSecret, apiBase, priceMonthly, priceYearly } = config.stripe;
  if (!secretKey || !webhookSecret || !priceMonthly || !priceYearly) return null;
  return {
    provider: createStripeProvider({ secretKey, webhookSecret, ...(apiBase ? { apiBase } : {}) }),
    prices: { monthly: priceMonthly, yearly: priceYearly },
  };
}
