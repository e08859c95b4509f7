import { accountLink, accountLinkInput } from '../../shared/schemas/card-payments.js';
import { router } from '../trpc/init.js';
import { catalogWriteProcedure } from '../trpc/procedures.js';
import { createAccountLink } from './connect-onboarding.js';

/**
 * `/v1/stripe-connect/…`: the seller's onboarding at the card provider. The account-link route
 * takes an API key with `admin:write` or a dashboard session (spec: Authentication › Route groups).
 */
export const createStripeConnectAccountLink = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/stripe-connect/account-link',
      tags: ['Card payments'],
      summary: "Create the seller's connected account if needed and return its onboarding link",
    },
    errors: ['seller_not_found', 'card_payments_not_configured', 'card_provider_unavailable', 'card_provider_error'],
  })
  .input(accountLinkInput)
  .output(accountLink)
  .mutation(({ ctx, input }) => createAccountLink(ctx, ctx.actor.organizationId, input));

export const stripeConnectRouter = router({ accountLink: createStripeConnectAccountLink });
