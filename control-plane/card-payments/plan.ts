import { z } from 'zod';
import { checkoutConfirmation, checkoutSessionId, checkoutStarted, checkoutStartInput } from '../../shared/schemas/card-payments.js';
import { router } from '../trpc/init.js';
import { adminProcedure } from '../trpc/procedures.js';
import { confirmCheckout } from './checkout-confirm.js';
import { startCheckout } from './checkout-start.js';

/**
 * `/v1/organizations/current/plan/…`: hub's own plan for the organization, bought by card through
 * the provider's checkout (docs/decisions.md#D-240). Organization admins only (spec: the checkout
 * confirm route needs an organization admin); an API key gets 403 `auth_type_not_allowed`.
 */
const providerErrors = ['card_payments_not_configured', 'card_provider_unavailable', 'card_provider_error'] as const;

export const startPlanCheckout = adminProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/organizations/current/plan/checkout',
      tags: ['Organizations'],
      summary: "Open a checkout session for one of hub's organization plans (admins only)",
    },
    successStatus: 201,
    errors: ['organization_plan_not_found', ...providerErrors],
  })
  .input(checkoutStartInput)
  .output(checkoutStarted)
  .mutation(({ ctx, input }) => startCheckout(ctx, ctx.member.organizationId, input));

export const confirmPlanCheckout = adminProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/organizations/current/plan/checkout/{sessionId}/confirm',
      tags: ['Organizations'],
      summary: 'Confirm a completed checkout: activates the plan and adds its credits, once (admins only)',
    },
    errors: ['checkout_incomplete', 'checkout_session_not_found', ...providerErrors],
  })
  .input(z.strictObject({ sessionId: checkoutSessionId }))
  .output(checkoutConfirmation)
  .mutation(({ ctx, input }) => confirmCheckout(ctx, ctx.member.organizationId, input.sessionId));

export const planRouter = router({
  checkout: router({ start: startPlanCheckout, confirm: confirmPlanCheckout }),
});
