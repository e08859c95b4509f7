import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { microsToCents } from '../../shared/card-payments/cents.js';
import { formatUsd } from '../../shared/money.js';
import type { checkoutStarted } from '../../shared/schemas/card-payments.js';
import type { RequestContext } from '../context.js';
import { organizationPlanOffer } from './organization-plan-offers.js';
import { callProvider, cardProvider } from './provider.js';

/**
 * Opens a checkout session at the provider for one of hub's organization plans: a subscription,
 * with the plan's trial when the organization has not had one. The dashboard completes it with
 * the provider's own page elements (client secret + publishable key), then confirms it
 * (checkout-confirm.ts). The session is recorded for this organization first-hand, so only
 * sessions hub opened for it can be confirmed.
 */
export async function startCheckout(
  ctx: RequestContext,
  organizationId: string,
  input: { planSlug: string; returnUrl: string },
): Promise<z.infer<typeof checkoutStarted>> {
  const { stripe, config } = cardProvider(ctx.config);
  const offer = organizationPlanOffer(ctx.config, input.planSlug);
  const current = await ctx.db.organizationPlan.findUnique({ where: { organizationId } });
  const trialDays = current?.trialUsed ? 0 : offer.trialDays;
  const metadata = { hubOrganizationId: organizationId, hubPlanSlug: offer.slug };
  const session = await callProvider(ctx.logger, 'checkout.sessions.create', () =>
    stripe.checkout.sessions.create(
      {
        mode: 'subscription',
        ui_mode: 'elements',
        return_url: input.returnUrl,
        client_reference_id: organizationId,
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: 'usd',
              unit_amount: microsToCents(offer.priceMicros),
              recurring: { interval: offer.interval },
              product_data: { name: `hub ${offer.name}` },
            },
          },
        ],
        subscription_data: { metadata, ...(trialDays > 0 ? { trial_period_days: trialDays } : {}) },
        metadata,
      },
      // A start is a new session each time it is asked for; the key makes the SDK's own retries of
      // this one call land on the same session.
      { idempotencyKey: `hub-checkout-${organizationId}-${randomUUID()}` },
    ),
  );
  await ctx.db.checkoutSession.create({
    data: { id: session.id, organizationId, status: 'open', planSlug: offer.slug, clientSecret: session.client_secret },
  });
  return {
    sessionId: session.id,
    clientSecret: session.client_secret,
    publishableKey: config.publishableKey,
    plan: { slug: offer.slug, name: offer.name, priceUsd: formatUsd(offer.priceMicros), interval: offer.interval },
    trialDays,
  };
}
